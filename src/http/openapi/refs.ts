/**
 * References to the OpenAPI document's component schemas, and the JSON
 * Schema object type: what the route descriptions and operation builders
 * need, without loading the schemas themselves.
 *
 * @module
 */

import type { SchemaName } from "./schemas.ts";

/** A JSON Schema object. */
export type JsonSchema = { [keyword: string]: unknown };

/** A reference to the component schema `name` (checked by the tests: Ajv refuses a dangling one). */
export function componentRef(name: string): JsonSchema {
  return { $ref: `#/components/schemas/${name}` };
}

/** A reference to the component schema `name`, a name the document has. */
export function schemaRef(name: SchemaName): JsonSchema {
  return componentRef(name);
}
