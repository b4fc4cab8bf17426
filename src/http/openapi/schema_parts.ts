/**
 * Building blocks of the OpenAPI document's JSON Schemas (draft 2020-12, the
 * dialect of OpenAPI 3.1): the schema type, references to component
 * schemas, the flag names, and the number shapes every body uses.
 *
 * @module
 */

/** A JSON Schema object. */
export type JsonSchema = { [keyword: string]: unknown };

/** A reference to the component schema `name` (checked by the tests: Ajv refuses a dangling one). */
export function componentRef(name: string): JsonSchema {
  return { $ref: `#/components/schemas/${name}` };
}

/** Every flag an answer can carry, in the interface's order. */
export const FLAGS = [
  "low_confidence",
  "drift",
  "low_radius",
  "uncalibrated",
  "unsupported",
  "empty_input",
  "options_changed",
  "option_removed",
  "new_options_served",
  "manual_threshold",
] as const;

/** A probability, 0 to 1. */
export const probability: JsonSchema = {
  type: "number",
  minimum: 0,
  maximum: 1,
};
/** A confidence, 0 to 1. */
export const confidence: JsonSchema = {
  type: "number",
  minimum: 0,
  maximum: 1,
  description: "Confidence in the answer, 0 to 1.",
};
/** A number at least 0. */
export const nonNegative: JsonSchema = { type: "number", minimum: 0 };
/** A count: an integer at least 0. */
export const count: JsonSchema = { type: "integer", minimum: 0 };
/** A number, or null where it is undefined. */
export const nullableNumber: JsonSchema = { type: ["number", "null"] };
