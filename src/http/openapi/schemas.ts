/**
 * Every component schema of the OpenAPI document, by name.
 *
 * @module
 */

import { DECISION_SCHEMAS } from "./decision_schemas.ts";
import { LIVE_SCHEMAS } from "./live_schemas.ts";
import type { JsonSchema } from "./refs.ts";
import { STATS_SCHEMAS } from "./stats_schemas.ts";

/** The component schemas, by name. */
export const SCHEMAS = {
  ...DECISION_SCHEMAS,
  ...STATS_SCHEMAS,
  ...LIVE_SCHEMAS,
} satisfies Record<
  string,
  JsonSchema
>;

/** The name of a component schema. */
export type SchemaName = keyof typeof SCHEMAS;
