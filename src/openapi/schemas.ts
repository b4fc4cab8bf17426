/**
 * Every component schema of the OpenAPI document, by name: the replies'
 * (`decision_schemas.ts`, `stats_schemas.ts`, `live_schemas.ts`) and the
 * request bodies', each from the description kept with its route.
 *
 * @module
 */

import {
  ALT_BODY,
  ALT_QUESTION,
  BATCH_BODY,
  DECIDE_BODY,
  DECISIONS_BODY,
  DECISIONS_QUESTION,
  FEEDBACK_BODY,
  FEEDBACK_ITEM,
  type JsonSchema,
  LIVE_RESET_BODY,
  PLAYGROUND_BODY,
} from "../wire/mod.ts";
import { DECISION_SCHEMAS as D } from "./decision_schemas.ts";
import { LIVE_SCHEMAS as L } from "./live_schemas.ts";
import { STATS_SCHEMAS } from "./stats_schemas.ts";

/** The component schemas, by name, in the document's order. */
export const SCHEMAS = {
  Error: D.Error,
  Flag: D.Flag,
  Answer: D.Answer,
  DecideRequest: DECIDE_BODY.schema,
  DecideResponse: D.DecideResponse,
  DecideBatchRequest: BATCH_BODY.schema,
  DecideBatchResponse: D.DecideBatchResponse,
  DecisionsQuestion: DECISIONS_QUESTION.schema,
  DecisionsRequest: DECISIONS_BODY.schema,
  Service: D.Service,
  DecisionsAnswer: D.DecisionsAnswer,
  DecisionsResponse: D.DecisionsResponse,
  ResponseService: D.ResponseService,
  AltQuestion: ALT_QUESTION.schema,
  AltDecisionsRequest: ALT_BODY.schema,
  AltAnswer: D.AltAnswer,
  AltDecisionsResponse: D.AltDecisionsResponse,
  PlaygroundRequest: PLAYGROUND_BODY.schema,
  PlaygroundResponse: D.PlaygroundResponse,
  HealthDocument: D.HealthDocument,
  ...STATS_SCHEMAS,
  FeedbackCheck: L.FeedbackCheck,
  LiveResetRequest: LIVE_RESET_BODY.schema,
  LiveResetResponse: L.LiveResetResponse,
  FeedbackItem: FEEDBACK_ITEM.schema,
  FeedbackRequest: FEEDBACK_BODY.schema,
  FeedbackResponse: L.FeedbackResponse,
  LiveQuestion: L.LiveQuestion,
  LiveFleet: L.LiveFleet,
  LiveStats: L.LiveStats,
} satisfies Record<
  string,
  JsonSchema
>;

/** The name of a component schema. */
export type SchemaName = keyof typeof SCHEMAS;
