/**
 * One description per request body, kept with its route: each JSON object
 * a route reads is described once, field by field (its JSON Schema, how
 * the 400 messages show it, the other words clients use for it), and
 * everything else is derived from that description when the module loads:
 * the sentence of what the route needs (every 400 message ends with it),
 * the known fields and did-you-mean of an unknown one, the JSON Schema of
 * the OpenAPI document, and its example requests.
 *
 * The request path keeps its hand-written readers (the typed reads of each
 * field, whose messages name the field); what they take from here is built
 * once per process, never per request: a closed object's field check is a
 * `switch` over its field names compiled when the module loads (as fast as
 * the hand-written `switch` it replaces; a `Set` lookup made the check of
 * a `/v1/decide` body a few percent slower, `scripts/bench-parse.ts`).
 *
 * @module
 */

import {
  type ObjectOptions,
  OptionalKind,
  type TObject,
  type TSchema,
  Type,
} from "@sinclair/typebox";
import { BodyShape, type JsonObject } from "./fields.ts";
import { type Synonyms, unknownField } from "./known_fields.ts";

/** A text the demo bundle answers, for example requests. */
export const PARCEL = "where is my parcel, it has not arrived yet";

/** One field of a JSON object a route reads. */
export interface FieldSpec<S extends TSchema = TSchema> {
  /** Its JSON Schema; `Type.Optional(...)` when it may be left out. */
  readonly schema: S;
  /**
   * How the sentence of what the route needs shows its value (`boolean`,
   * `string or object`); null: accepted, not shown.
   */
  readonly words: string | null;
  /** Other formats' words for it, named by the did-you-mean of a 400. */
  readonly aka?: readonly string[];
  /**
   * Shown without the `?` of an optional field, because its words say when
   * it may be left out.
   */
  readonly plain?: true;
}

/** The fields of an object, in the order the schema and the messages list them. */
export type Fields = Record<string, FieldSpec>;

/** The TypeBox properties of `F`. */
type Properties<F extends Fields> = { [K in keyof F]: F[K]["schema"] };

/** An example request: each is valid and gets a 200 from the demo bundle. */
export interface BodyExample {
  summary: string;
  value: unknown;
}

/**
 * One JSON object a route reads (a body, or an object inside one): its
 * fields and whether a field it does not know is a 400 (`closed`) or
 * accepted and ignored.
 */
export class ObjectSpec<F extends Fields = Fields> {
  /** The field names, in order: the list a 400 for an unknown field names. */
  readonly known: readonly string[];
  /** Each other word for a field, then the field it stands for. */
  readonly synonyms: Synonyms;
  /** The JSON Schema of the object. */
  readonly schema: TObject<Properties<F>>;
  /** The object as the sentence of what the route needs shows it: `{"state": string, ...}`. */
  readonly words: string;
  /**
   * The first field of an object this object does not know; null when
   * none (always null when it is open).
   */
  readonly unknownKey: (o: JsonObject) => string | null;

  /**
   * `fields` in order; `closed`: an unknown field is a 400; `options`: the
   * schema's own keywords (description, `additionalProperties`).
   */
  constructor(
    readonly fields: F,
    readonly closed: boolean,
    options: ObjectOptions = {},
  ) {
    const names = Object.keys(fields);
    this.known = names;
    this.unknownKey = closed ? keyCheck(names) : () => null;
    const synonyms: Record<string, string> = {};
    const properties: Record<string, TSchema> = {};
    const shown: string[] = [];
    for (const name of names) {
      const f = fields[name]!;
      for (const other of f.aka ?? []) synonyms[other] = name;
      properties[name] = f.schema;
      if (f.words === null) continue;
      const mark = OptionalKind in f.schema && f.plain !== true ? "?" : "";
      shown.push(`${JSON.stringify(name)}${mark}: ${f.words}`);
    }
    this.synonyms = synonyms;
    this.schema = Type.Object(properties, options) as TObject<Properties<F>>;
    this.words = `{${shown.join(", ")}}`;
  }

  /**
   * Throws the 400 of `shape` for the first field of `o` this object does
   * not know (`at`: where `o` is, `""` for the body itself); nothing when
   * the object is open. Allocates nothing when every field is known.
   */
  check(shape: BodyShape, o: JsonObject, at = ""): void {
    const key = this.unknownKey(o);
    if (key !== null) throw this.unknown(shape, at, key);
  }

  /** The 400 of `shape` for the unknown field `key` of this object at `at`. */
  unknown(shape: BodyShape, at: string, key: string): ReturnType<
    BodyShape["fail"]
  > {
    return unknownField(shape, at, key, this.known, this.synonyms);
  }
}

/**
 * A function giving the first key of an object that is not one of `names`
 * (null when there is none). A body has a handful of fields, so comparing
 * each key with each name in turn is as quick as a `Set` lookup and needs
 * no hashing.
 *
 * @example
 * ```ts ignore
 * const check = keyCheck(["state", "top"]);
 * check({ state: "x", k: 3 }); // "k"
 * ```
 */
function keyCheck(names: readonly string[]): (o: JsonObject) => string | null {
  const known = [...names];
  const n = known.length;
  return (o: JsonObject) => {
    keys: for (const key in o) {
      for (let i = 0; i < n; i++) if (known[i] === key) continue keys;
      return key;
    }
    return null;
  };
}

/**
 * A route's request body: the checker of its fields (a `BodyShape` whose
 * 400s end with the sentence of what the route needs), its JSON Schema and
 * its example requests.
 */
export class BodySpec<S extends TSchema = TSchema> extends BodyShape {
  /**
   * `needed`: the sentence of what the route needs (built from the
   * objects' `words`); `schema`: the body's JSON Schema (an object's
   * `schema`, or a union with it); `examples`: for the OpenAPI document.
   */
  constructor(
    needed: string,
    readonly schema: S,
    readonly examples: Readonly<Record<string, BodyExample>>,
  ) {
    super(needed);
  }
}
