/**
 * Every route of the service in one table: its method and path, whether it
 * needs the access token, whether a person opens it in a browser, whether
 * it answers decisions (then it is counted as a decision under its path,
 * and the table holds how it reads its body and writes its reply), what
 * the OpenAPI document says of it, and its line in `serve --help`. The app
 * (`app.ts`), the token check, the statistics, the OpenAPI document and
 * the usage text all read it; a new route is a new row.
 *
 * @module
 */

import {
  ALT_SHAPE,
  DECIDE_SHAPE,
  DECISIONS_SHAPE,
  type DecisionShape,
} from "../wire/mod.ts";
import {
  ALT_DECISIONS_DOC,
  DASHBOARD_DOC,
  DECIDE_BATCH_DOC,
  DECIDE_DOC,
  DECISIONS_DOC,
  FEEDBACK_DOC,
  type GetRouteSpec,
  HEALTH_DOC,
  type JsonRouteSpec,
  LIVE_RESET_DOC,
  METRICS_DOC,
  OPENAPI_DOC,
  PLAYGROUND_DOC,
  READY_DOC,
  STATS_DOC,
} from "../openapi/mod.ts";

/** What every route says, whatever its method. */
interface RouteFacts {
  /** The path, matched exactly. */
  readonly path: string;
  /** Needs the access token (when one is configured). */
  readonly guarded: boolean;
  /** A person opens it in a browser: its 401 asks for a Basic login. */
  readonly browser: boolean;
  /**
   * With a feedback token configured (`serve --feedback-token-file`), it
   * needs that token instead of the access token (`/v1/feedback`, and
   * `/v1/live/reset`, which undoes what feedback did).
   */
  readonly feedbackToken?: true;
  /**
   * For a decision route, how it reads its body and writes its reply (it is
   * counted as a decision under its path); null for any other route.
   */
  readonly decision: DecisionShape | null;
  /** What `serve --help` says it does, in a few words. */
  readonly usage: string;
  /** Its body is a batch of `decision` bodies (`batch.ts`); each item counts as a decision. */
  readonly batch?: true;
}

/** A route answering POST, with a JSON body. */
export interface PostRoute extends RouteFacts {
  readonly method: "POST";
  /** Its OpenAPI operation. */
  readonly operation: JsonRouteSpec;
}

/** A route answering GET (and HEAD). */
export interface GetRoute extends RouteFacts {
  readonly method: "GET";
  /** Its OpenAPI operation. */
  readonly operation: GetRouteSpec;
}

/** One row of the route table. */
export type RouteSpec = PostRoute | GetRoute;

/** Every route, in the order the OpenAPI document lists them. */
export const ROUTE_TABLE = [
  {
    method: "POST",
    path: "/v1/decide",
    guarded: true,
    browser: false,
    decision: DECIDE_SHAPE,
    usage: "answers in the service's own shape",
    operation: DECIDE_DOC,
  },
  {
    method: "POST",
    path: "/v1/decide/batch",
    guarded: true,
    browser: false,
    decision: DECIDE_SHAPE,
    batch: true,
    usage: "up to 256 /v1/decide bodies in one request",
    operation: DECIDE_BATCH_DOC,
  },
  {
    method: "POST",
    path: "/v1/decisions",
    guarded: true,
    browser: false,
    decision: DECISIONS_SHAPE,
    usage: "answers in the decisions-API shape",
    operation: DECISIONS_DOC,
  },
  {
    method: "POST",
    path: "/v1/altdecisions",
    guarded: true,
    browser: false,
    decision: ALT_SHAPE,
    usage: "answers in the alternate decision-model shape",
    operation: ALT_DECISIONS_DOC,
  },
  {
    method: "POST",
    path: "/v1/playground",
    guarded: true,
    browser: false,
    decision: null,
    usage: "what the table thinks of a text (not a decision)",
    operation: PLAYGROUND_DOC,
  },
  {
    method: "POST",
    path: "/v1/feedback",
    guarded: true,
    browser: false,
    feedbackToken: true,
    decision: null,
    usage: "what the model answered (audits too)",
    operation: FEEDBACK_DOC,
  },
  {
    method: "POST",
    path: "/v1/live/reset",
    guarded: true,
    browser: false,
    // A reset undoes what feedback did: it takes the credential that posts
    // feedback, never the decision clients' access token alone.
    feedbackToken: true,
    decision: null,
    usage: "reset live evidence (one or all)",
    operation: LIVE_RESET_DOC,
  },
  {
    method: "GET",
    path: "/",
    guarded: true,
    browser: true,
    decision: null,
    usage: "the dashboard",
    operation: DASHBOARD_DOC,
  },
  {
    method: "GET",
    path: "/v1/stats",
    guarded: true,
    browser: true,
    decision: null,
    usage: "statistics since the server started",
    operation: STATS_DOC,
  },
  {
    method: "GET",
    path: "/metrics",
    guarded: true,
    browser: true,
    decision: null,
    usage: "Prometheus metrics",
    operation: METRICS_DOC,
  },
  {
    method: "GET",
    path: "/v1/health",
    guarded: false,
    browser: false,
    decision: null,
    usage: "health, questions and versions",
    operation: HEALTH_DOC,
  },
  {
    method: "GET",
    path: "/v1/ready",
    guarded: true,
    browser: false,
    decision: null,
    usage: "readiness: 200 once ready for traffic, else 503",
    operation: READY_DOC,
  },
  {
    method: "GET",
    path: "/v1/openapi.json",
    guarded: true,
    browser: false,
    decision: null,
    usage: "the OpenAPI document of every route",
    operation: OPENAPI_DOC,
  },
] as const satisfies readonly RouteSpec[];

/** A row of `ROUTE_TABLE`, with its literal path. */
type Row = (typeof ROUTE_TABLE)[number];

/** A row of the table that answers decisions. */
export type DecisionRouteSpec = Extract<Row, { decision: DecisionShape }>;

/** The path of a decision route. */
export type DecisionRoute = DecisionRouteSpec["path"];

/** The path of a route that answers anything but decisions. */
export type OtherRoute = Exclude<Row["path"], DecisionRoute>;

/** The decision routes, in table order (the order statistics report them in). */
export const DECISION_ROUTES: readonly DecisionRoute[] = ROUTE_TABLE.flatMap(
  (r) => r.decision === null ? [] : [r.path],
);

/** Route labels of the response counters: every path, then `other`. */
export const ROUTE_LABELS: readonly string[] = [
  ...new Set(ROUTE_TABLE.map((r) => r.path)),
  "other",
];

const BY_PATH: ReadonlyMap<string, readonly RouteSpec[]> = (() => {
  const out = new Map<string, RouteSpec[]>();
  for (const r of ROUTE_TABLE) {
    const list = out.get(r.path);
    if (list === undefined) out.set(r.path, [r]);
    else list.push(r);
  }
  return out;
})();

/** The label a response to `path` is counted under: its path, or `other`. */
export function routeLabel(path: string): string {
  return BY_PATH.has(path) ? path : "other";
}

/** The methods `path` answers, in table order; empty for a path no route serves. */
export function methodsOf(path: string): readonly ("GET" | "POST")[] {
  return (BY_PATH.get(path) ?? []).map((r) => r.method);
}

/**
 * True when a request needs the access token: any request but one to a
 * route that is not guarded (an unknown path needs it too, so its 404 says
 * nothing to a caller without the token).
 */
export function needsToken(path: string): boolean {
  const routes = BY_PATH.get(path);
  return routes === undefined || routes.some((r) => r.guarded);
}

/** True when a request to `path` needs the feedback token when one is configured (instead of the access token). */
export function takesFeedbackToken(path: string): boolean {
  return BY_PATH.get(path)?.some((r) => "feedbackToken" in r) ?? false;
}

/** True when a person opens the request in a browser (GET or HEAD of a browser route). */
export function opensInBrowser(method: string, path: string): boolean {
  if (method !== "GET" && method !== "HEAD") return false;
  return BY_PATH.get(path)?.some((r) => r.method === "GET" && r.browser) ??
    false;
}
