/**
 * Checking the fields of a parsed JSON body. Every failure is a 400 whose
 * message names the field, what it held, and the body the route needs.
 * Also the largest body the interface accepts (the transport refuses a
 * longer one with 413 before reading it; `predict` caps a line the same).
 *
 * @module
 */

import { HTTPException } from "hono/http-exception";
import { stateText } from "../engine/mod.ts";

/** The largest accepted request body: 1 MiB. */
export const MAX_BODY_BYTES = 1_048_576;

/** A 400 whose message says what was wrong and what body is needed. */
export function badBody(reason: string, needed: string): HTTPException {
  return new HTTPException(400, { message: `${reason}. Send ${needed}` });
}

/** A JSON object (not an array, not null). */
export type JsonObject = Record<string, unknown>;

/** True for a JSON object that is neither null nor an array. */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Names a JSON value's type for an error message. */
export function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") return "a string";
  if (typeof value === "number") return "a number";
  if (typeof value === "boolean") return "a boolean";
  return typeof value;
}

/** A route's body checker: each method throws a 400 naming what the route needs. */
export class BodyShape {
  /** `needed` is the body the route accepts, as shown in error messages. */
  constructor(readonly needed: string) {}

  /** A 400 for `reason`. */
  fail(reason: string): HTTPException {
    return badBody(reason, this.needed);
  }

  /** The body itself must be a JSON object. */
  object(body: unknown): JsonObject {
    if (!isObject(body)) {
      throw this.fail(`The body must be a JSON object, got ${describe(body)}`);
    }
    return body;
  }

  /** A field that must be a string. */
  string(value: unknown, field: string): string {
    if (typeof value !== "string") {
      throw this.fail(`"${field}" must be a string, got ${describe(value)}`);
    }
    return value;
  }

  /** A field that may be absent or null, or else must be a string. */
  optionalString(value: unknown, field: string): string | undefined {
    return value === undefined || value === null
      ? undefined
      : this.string(value, field);
  }

  /** A field that may be absent or null, or else must be a boolean. */
  optionalBoolean(value: unknown, field: string): boolean | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "boolean") {
      throw this.fail(
        `"${field}" must be true or false, got ${describe(value)}`,
      );
    }
    return value;
  }

  /**
   * A field that may be absent or null, or else must be a whole number of
   * at least 1 (such as `top`).
   */
  optionalCount(value: unknown, field: string): number | null {
    if (value === undefined || value === null) return null;
    if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
      throw this.fail(
        `"${field}" must be a whole number, 1 or more, got ${
          typeof value === "number" ? value : describe(value)
        }`,
      );
    }
    return value;
  }

  /** A field that must be an array. */
  array(value: unknown, field: string): unknown[] {
    if (!Array.isArray(value)) {
      throw this.fail(`"${field}" must be an array, got ${describe(value)}`);
    }
    return value;
  }

  /** A field that must be a JSON object. */
  objectField(value: unknown, field: string): JsonObject {
    if (!isObject(value)) {
      throw this.fail(`"${field}" must be an object, got ${describe(value)}`);
    }
    return value;
  }

  /**
   * A state field (`state` of `/v1/decide`, `/v1/altdecisions` and
   * feedback): present, a string or a JSON object; the text the table
   * reads (an object serialised as JSON).
   */
  state(value: unknown, field: string): string {
    if (value === undefined) throw this.fail(`"${field}" is missing`);
    if (typeof value !== "string" && !isObject(value)) {
      throw this.fail(
        `"${field}" must be a string or a JSON object, got ${describe(value)}`,
      );
    }
    try {
      return stateText(value);
    } catch (e) {
      // A parsed object too deeply nested for JSON.stringify.
      throw this.fail(
        `"${field}" cannot be serialised to JSON (${(e as Error).message})`,
      );
    }
  }

  /** Throws a 400 when `field` holds more than `limit` entries (`count`). */
  atMost(count: number, limit: number, field: string): void {
    if (count > limit) {
      throw this.fail(
        `"${field}" has ${count} entries; a request may give at most ${limit}`,
      );
    }
  }

  /** A field that must be an array of at most `limit` strings. */
  strings(value: unknown, field: string, limit = Infinity): string[] {
    const items = this.array(value, field);
    this.atMost(items.length, limit, field);
    for (let i = 0; i < items.length; i++) {
      if (typeof items[i] !== "string") {
        throw this.fail(
          `"${field}[${i}]" must be a string, got ${describe(items[i])}`,
        );
      }
    }
    return items as string[];
  }
}
