/**
 * The service behind every route: the served table (read once per request,
 * replaced whole by `swap`), the statistics, the access-token check, and
 * the three decision routes as one function from body text to reply bytes.
 * The Hono app (`app.ts`) answers decisions through `decide`.
 *
 * The engine decides every answer and flag; this module only reads bodies,
 * asks the table and hands the verdicts to the reply writers.
 *
 * @module
 */

import { HTTPException } from "hono/http-exception";
import { prepareText } from "../engine/answer.ts";
import type { DriftMonitor } from "../engine/drift.ts";
import type { Table } from "../engine/table.ts";
import { dashboardHtml as defaultDashboard } from "../../static/mod.ts";
import { ALT_SHAPE } from "./altdecisions.ts";
import { type TokenCheck, tokenCheck } from "./auth.ts";
import { parseJsonBody } from "./body.ts";
import { DECIDE_SHAPE } from "./decide.ts";
import { assessRequest, type DecisionShape } from "./decision_request.ts";
import { DECISIONS_SHAPE } from "./decisions.ts";
import type { JsonWriter } from "./json_writer.ts";
import { LiveController, type LiveOptions } from "../live/controller.ts";
import { type ServedTable, serveTable } from "./served.ts";
import { round1 } from "./stats/latency.ts";
import { type DecisionRoute, ServiceStats } from "./stats/service_stats.ts";
import { NO_TOKEN, type TokenSource } from "./token.ts";

/** What the service serves and how. */
export interface AppDeps {
  /** The loaded table. */
  table: Table;
  /** The bundle folder, as shown in statistics. */
  bundlePath: string;
  /** Milliseconds the bundle took to load, shown in statistics. */
  loadMs?: number | null | undefined;
  /** The access token; none by default (every route open). */
  token?: TokenSource | undefined;
  /** The drift guard of the decision routes; a new one from the bundle settings by default. */
  monitor?: DriftMonitor | undefined;
  /** Keep the input text of recent decisions in statistics. */
  keepText?: boolean | undefined;
  /** Cost of one language-model call, for the money-saved figure. */
  costPerCall?: number | null | undefined;
  /** Latency of one language-model call in milliseconds, for the time-saved figure. */
  llmLatencyMs?: number | null | undefined;
  /** The dashboard page served at `GET /`; the one of `static/mod.ts` by default. */
  dashboardHtml?: string | undefined;
  /** Where unexpected errors and token-file problems are reported; stderr by default. */
  log?: ((message: string) => void) | undefined;
  /**
   * The live certificate: audit rate and seed. Off (audit rate 0) by
   * default here; `serve` turns it on at `DEFAULT_AUDIT_RATE`.
   */
  live?: LiveOptions | undefined;
  /**
   * Where feedback is kept as trace lines (`serve --feedback-log`); called
   * before anything is counted, so a failure loses nothing.
   */
  feedbackLog?: FeedbackSink | undefined;
}

/** Appends feedback trace lines (JSON text, one per line, newline-terminated) somewhere durable. */
export type FeedbackSink = (lines: string) => Promise<void>;

/** Every route of the service and the methods it answers. */
export const ROUTES: Readonly<Record<string, readonly string[]>> = {
  "/": ["GET"],
  "/v1/decide": ["POST"],
  "/v1/decisions": ["POST"],
  "/v1/altdecisions": ["POST"],
  "/v1/playground": ["POST"],
  "/v1/feedback": ["POST"],
  "/v1/stats": ["GET"],
  "/metrics": ["GET"],
  "/v1/health": ["GET"],
  "/v1/openapi.json": ["GET"],
};

/** Route labels of the response counters: every route, then `other`. */
export const ROUTE_LABELS: readonly string[] = [
  ...Object.keys(ROUTES),
  "other",
];

/** The only path that needs no token. */
export const HEALTH = "/v1/health";
/** Paths a person opens in a browser: a 401 there brings up the login prompt. */
const BROWSER_PATHS = new Set(["/", "/v1/stats", "/metrics"]);

/**
 * The shape of a decision route. A comparison, not a lookup by the route
 * string: a keyed lookup that sees three different keys makes V8 give up
 * optimising the function around it.
 */
function shapeOf(route: DecisionRoute): DecisionShape {
  return route === "/v1/decide"
    ? DECIDE_SHAPE
    : route === "/v1/decisions"
    ? DECISIONS_SHAPE
    : ALT_SHAPE;
}

/** A running service: what every route reads and records. */
export class Service {
  #served: ServedTable;
  /** Counters, latency and recent decisions. */
  readonly stats: ServiceStats;
  /** The access-token check of every route but health. */
  readonly check: TokenCheck;
  /** The dashboard page. */
  readonly dashboardHtml: string;
  /** Where unexpected errors are reported. */
  readonly log: (message: string) => void;
  /** The live certificate: audit sampling, pending audits, per-question certificates. */
  readonly live: LiveController;
  /** Where feedback is kept as traces; null when nowhere. */
  readonly feedbackLog: FeedbackSink | null;

  /** A service for `deps`, counting from now. */
  constructor(deps: AppDeps) {
    this.#served = serveTable(deps.table, deps.monitor);
    this.log = deps.log ?? ((m: string) => console.error(m));
    this.dashboardHtml = deps.dashboardHtml ?? defaultDashboard;
    this.live = new LiveController(deps.live ?? { auditRate: 0 });
    this.feedbackLog = deps.feedbackLog ?? null;
    this.stats = new ServiceStats({
      table: deps.table,
      monitor: this.#served.monitor,
      routeLabels: ROUTE_LABELS,
      bundlePath: deps.bundlePath,
      loadMs: deps.loadMs,
      keepText: deps.keepText,
      costPerCall: deps.costPerCall,
      llmLatencyMs: deps.llmLatencyMs,
    });
    this.check = tokenCheck({
      source: deps.token ?? NO_TOKEN,
      isOpen: (_method, path) => path === HEALTH,
      isBrowser: (method, path) =>
        (method === "GET" || method === "HEAD") && BROWSER_PATHS.has(path),
    });
  }

  /** The table served now; a request reads it once, at its start. */
  get served(): ServedTable {
    return this.#served;
  }

  /**
   * Serves `table` from the next request on (with a new drift guard from
   * its settings unless `monitor` is given; `loadMs`, when given, is what
   * `/v1/stats` shows as its load time). Requests already answering finish
   * with the table they started with; none is dropped.
   */
  swap(table: Table, monitor?: DriftMonitor, loadMs?: number): ServedTable {
    const next = serveTable(table, monitor);
    this.#served = next;
    this.stats.serve(table, next.monitor, undefined, loadMs);
    return next;
  }

  /** The label a response to `path` is counted under. */
  routeLabel(path: string): string {
    return ROUTES[path] === undefined ? "other" : path;
  }

  /**
   * Answers a decision route: parses `body`, asks the table, records the
   * decision and writes the JSON reply (or a JSON error) into `w`; returns
   * the status. `latency_us` runs from here (the body received as text) to
   * the answers ready.
   */
  decide(route: DecisionRoute, body: string, w: JsonWriter): number {
    const served = this.#served;
    const start = performance.now();
    const shape = shapeOf(route);
    const mark = w.length;
    try {
      const request = shape.parse(parseJsonBody(body, shape.needed));
      const { table, monitor } = served;
      const answers = assessRequest(
        table,
        prepareText(table, request.text),
        request,
        monitor,
      );
      const audits = this.live.recordDecisions(table, answers, request.text);
      const latencyUs = round1((performance.now() - start) * 1000);
      this.stats.recordDecision(route, request.text, answers, latencyUs);
      shape.write(w, served, request, answers, latencyUs, audits);
      return 200;
    } catch (e) {
      w.reset(mark);
      if (e instanceof HTTPException) {
        w.ascii('{"error":').string(e.message).ascii("}");
        return e.status;
      }
      this.log(
        `Internal error on POST ${route}: ${(e as Error)?.stack ?? String(e)}`,
      );
      w.ascii('{"error":"Internal server error"}');
      return 500;
    }
  }
}
