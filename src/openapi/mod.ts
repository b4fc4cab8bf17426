/**
 * The service's contract as an OpenAPI 3.1 document, and the schemas of
 * the documents it writes as objects. Each reply document (`/v1/stats`,
 * feedback, the live reset, the playground, health, readiness, the
 * learner's section) has a TypeBox schema here and takes its TypeScript
 * type from it, so the types the service builds with and the schemas it
 * publishes cannot drift apart. Each route's description (`route_docs.ts`)
 * is a value the route table carries; the document itself
 * (`openApiJson`) is built from the table it is given, its component
 * schemas loaded only when it is first asked for.
 *
 * @example
 * ```ts
 * import { openApiJson } from "./mod.ts";
 * import { ROUTE_TABLE } from "../http/routes.ts";
 *
 * const text = await openApiJson(ROUTE_TABLE);
 * console.log(JSON.parse(text).openapi); // "3.1.0"
 * ```
 *
 * @module
 */

import type { DocumentedRoute } from "./document.ts";

export type { DocumentedRoute, OpenApiDocument } from "./document.ts";
export type { GetRouteSpec, JsonRouteSpec } from "./operations.ts";
export {
  ALT_DECISIONS_DOC,
  DASHBOARD_DOC,
  DECIDE_BATCH_DOC,
  DECIDE_DOC,
  DECISIONS_DOC,
  FEEDBACK_DOC,
  HEALTH_DOC,
  LIVE_RESET_DOC,
  METRICS_DOC,
  OPENAPI_DOC,
  PLAYGROUND_DOC,
  READY_DOC,
  STATS_DOC,
} from "./route_docs.ts";
export type { HealthDocument, PlaygroundResponse } from "./decision_schemas.ts";
export type { LearnStats } from "./learn_schemas.ts";
export type {
  FeedbackReply,
  LiveFeedbackCheckStats,
  LiveQuestionStats,
  LiveResetReply,
  LiveStatsDocument,
} from "./live_schemas.ts";
export type { ReadyDocument } from "./ready_schema.ts";
export type {
  LatencySummary,
  QuestionCounts,
  RecentDecision,
  StatsDocument,
  TiersStats,
} from "./stats_schemas.ts";

/**
 * The OpenAPI document of a service answering `routes`, as served and
 * committed (`docs/openapi.json`: JSON, two-space indentation, a final
 * newline). Its builder and component schemas are loaded on the first
 * call, never by a process that is not asked for the document.
 */
export async function openApiJson(
  routes: readonly DocumentedRoute[],
): Promise<string> {
  return (await import("./document.ts")).documentJson(routes);
}
