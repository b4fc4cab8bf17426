/**
 * Building blocks of the service's JSON Schemas (draft 2020-12, the dialect
 * of OpenAPI 3.1), written with TypeBox so that each schema is also the
 * TypeScript type of what it describes (`Static<typeof Schema>`): the
 * documents the service builds as objects (`/v1/stats`, feedback and
 * playground replies, health) take their types from here, and the OpenAPI
 * document its schemas. Nothing here runs on the request path.
 *
 * @module
 */

import {
  type Static,
  type TNull,
  type TSchema,
  type TUnion,
  type TUnsafe,
  Type,
} from "@sinclair/typebox";
import {
  type Flag as EngineFlag,
  FLAGS as ENGINE_FLAGS,
} from "../engine/mod.ts";
import { componentRef, type JsonSchema } from "./refs.ts";

/**
 * A reference to the component schema `name`, typed as `schema` (the
 * component it names), so a type built from a schema that refers to
 * another is the type of both.
 */
export function ref<T extends TSchema>(
  name: string,
  _schema: T,
): TUnsafe<Static<T>> {
  return Type.Unsafe<Static<T>>(componentRef(name));
}

/** `schema` or null. */
export function nullable<T extends TSchema>(
  schema: T,
  options: JsonSchema = {},
): TUnion<[T, TNull]> {
  return Type.Union([schema, Type.Null()], options);
}

/** An object of any keys, each holding a `schema` (JSON Schema `additionalProperties`). */
export function recordOf<T extends TSchema>(
  schema: T,
  options: JsonSchema = {},
): TUnsafe<Record<string, Static<T>>> {
  return Type.Unsafe<Record<string, Static<T>>>({
    ...options,
    type: "object",
    additionalProperties: schema,
  });
}

/** One of the given strings (JSON Schema `enum`). */
export function oneOf<const V extends readonly string[]>(
  values: V,
  options: JsonSchema = {},
): TUnsafe<V[number]> {
  return Type.Unsafe<V[number]>({ ...options, enum: [...values] });
}

/** Every flag an answer can carry, in the interface's order. */
export const FLAGS: readonly EngineFlag[] = ENGINE_FLAGS;

/** A flag, or null when the answer is certified. */
export const Flag: TUnsafe<EngineFlag | null> = Type.Unsafe<
  EngineFlag | null
>({
  type: ["string", "null"],
  enum: [...FLAGS, null],
  description:
    "Why the answer is not certified; null when it is. Only the first rule that failed is named.",
});

/** A probability, 0 to 1. */
export const probability = Type.Number({ minimum: 0, maximum: 1 });
/** A confidence, 0 to 1. */
export const confidence = Type.Number({
  minimum: 0,
  maximum: 1,
  description: "Confidence in the answer, 0 to 1.",
});
/** A number at least 0. */
export const nonNegative = Type.Number({ minimum: 0 });
/** A count: an integer at least 0. */
export const count = Type.Integer({ minimum: 0 });
/** A number, or null where it is undefined. */
export const nullableNumber = nullable(Type.Number());
/** Inserted words that could change an answer, or null when none can. */
export const radius = nullable(Type.Integer({ minimum: 0 }));
