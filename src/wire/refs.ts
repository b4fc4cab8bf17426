/**
 * References to the OpenAPI document's component schemas, and the JSON
 * Schema object type: what the schemas and the operation builders need,
 * without loading the schemas themselves (nothing here imports them, so
 * the schemas can refer to one another through it without a cycle).
 *
 * @module
 */

/** A JSON Schema object. */
export type JsonSchema = { [keyword: string]: unknown };

/** A reference to the component schema `name` (checked by the tests: Ajv refuses a dangling one). */
export function componentRef(name: string): JsonSchema {
  return { $ref: `#/components/schemas/${name}` };
}
