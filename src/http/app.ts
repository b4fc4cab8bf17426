/**
 * The HTTP service as a Hono app: every route of the interface, the access
 * token, JSON errors, statistics. Built by a function so tests can call
 * `app.request()` without a network; `src/cli/serve.ts` puts it on
 * `Deno.serve`.
 *
 * The engine decides every answer and flag; the routes only check bodies
 * and translate shapes.
 *
 * @module
 */

import { Hono } from "hono";
import { assess, type Assessment, prepareText } from "../engine/answer.ts";
import { DriftMonitor, peekGuard } from "../engine/drift.ts";
import type { Table } from "../engine/table.ts";
import { dashboardHtml as defaultDashboard } from "../../static/mod.ts";
import { ALT_BODY, altResponse, parseAltDecisions } from "./altdecisions.ts";
import { tokenGuard } from "./auth.ts";
import { readJsonBody } from "./body.ts";
import { type Ask, DECIDE_BODY, decideAnswers, parseDecide } from "./decide.ts";
import {
  DECISIONS_BODY,
  decisionsResponse,
  parseDecisions,
} from "./decisions.ts";
import { errorResponse, methodNotAllowed, notFound } from "./errors.ts";
import { round1 } from "./latency.ts";
import { METRICS_CONTENT_TYPE, renderMetrics } from "./metrics.ts";
import { OPENAPI_JSON } from "./openapi.ts";
import {
  assessTyped,
  type ModelQuestion,
  type TypedAssessment,
} from "./model_questions.ts";

import {
  parsePlayground,
  PLAYGROUND_BODY,
  playgroundResponse,
} from "./playground.ts";
import { ServiceStats } from "./stats.ts";
import { NO_TOKEN, type TokenSource } from "./token.ts";
import { INTERFACE_VERSION, TOOL_VERSION } from "../version.ts";

/** What both decision-model shapes parse to. */
interface ModelRequest {
  text: string;
  questions: readonly ModelQuestion[];
  exposed: boolean;
}

/** What the app serves and how. */
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
}

/** Every route of the service and the methods it answers. */
export const ROUTES: Readonly<Record<string, readonly string[]>> = {
  "/": ["GET"],
  "/v1/decide": ["POST"],
  "/v1/decisions": ["POST"],
  "/v1/altdecisions": ["POST"],
  "/v1/playground": ["POST"],
  "/v1/stats": ["GET"],
  "/metrics": ["GET"],
  "/v1/health": ["GET"],
  "/v1/openapi.json": ["GET"],
};

/** The only path that needs no token. */
const HEALTH = "/v1/health";
/** Paths a person opens in a browser: a 401 there brings up the login prompt. */
const BROWSER_PATHS = new Set(["/", "/v1/stats", "/metrics"]);

function microsSince(start: number): number {
  return round1((performance.now() - start) * 1000);
}

/**
 * Builds the service. Routes: `POST /v1/decide`, `/v1/decisions`,
 * `/v1/altdecisions`, `/v1/playground`; `GET /`, `/v1/stats`, `/metrics`,
 * `/v1/health`, `/v1/openapi.json`.
 *
 * @example
 * ```ts
 * const app = createApp({ table, bundlePath: "demo/bundle" });
 * const res = await app.request("/v1/decide", {
 *   method: "POST",
 *   body: JSON.stringify({ state: "my card was stolen" }),
 * });
 * ```
 */
export function createApp(deps: AppDeps): Hono {
  const { table } = deps;
  const log = deps.log ?? ((m: string) => console.error(m));
  const monitor = deps.monitor ?? new DriftMonitor(table.settings.drift);
  const peek = peekGuard(monitor);
  const stats = new ServiceStats({
    table,
    bundlePath: deps.bundlePath,
    loadMs: deps.loadMs,
    monitor,
    keepText: deps.keepText,
    costPerCall: deps.costPerCall,
    llmLatencyMs: deps.llmLatencyMs,
  });
  const html = deps.dashboardHtml ?? defaultDashboard;
  const everyQuestion: Ask[] = table.questions.map((q) => ({ name: q.name }));
  const questionNames = table.questions.map((q) => q.name);

  const app = new Hono();

  app.use("*", async (c, next) => {
    await next();
    const path = c.req.path;
    stats.recordResponse(
      ROUTES[path] === undefined ? "other" : path,
      c.res.status,
    );
  });
  app.use(
    "*",
    tokenGuard({
      source: deps.token ?? NO_TOKEN,
      isOpen: (_method, path) => path === HEALTH,
      isBrowser: (method, path) =>
        (method === "GET" || method === "HEAD") && BROWSER_PATHS.has(path),
    }),
  );

  app.post("/v1/decide", async (c) => {
    const body = await readJsonBody(c.req.raw, DECIDE_BODY.needed);
    // latency_us: from the body received to the answers ready.
    const start = performance.now();
    const request = parseDecide(body);
    const text = prepareText(table, request.text);
    const ask = {
      options: undefined as readonly string[] | undefined,
      exposed: request.exposed,
    };
    const assessments: Assessment[] = [];
    for (const q of request.asks ?? everyQuestion) {
      ask.options = q.options;
      assessments.push(assess(table, text, q.name, ask, monitor));
    }
    const latencyUs = microsSince(start);
    stats.recordDecision("/v1/decide", request.text, assessments, latencyUs);
    return c.json({
      answers: decideAnswers(assessments),
      latency_us: latencyUs,
    });
  });

  /**
   * A decision-model route: read and check the body, answer its typed
   * questions, record them, shape the reply. `latency_us` runs from the
   * body received to the answers ready.
   */
  const modelRoute = <R extends ModelRequest>(
    route: "/v1/decisions" | "/v1/altdecisions",
    needed: string,
    parse: (body: unknown) => R,
    respond: (
      request: R,
      answers: TypedAssessment[],
      latencyUs: number,
    ) => unknown,
  ) =>
    app.post(route, async (c) => {
      const body = await readJsonBody(c.req.raw, needed);
      const start = performance.now();
      const request = parse(body);
      const text = prepareText(table, request.text);
      const answers = assessTyped(
        table,
        text,
        request.questions,
        request.exposed,
        monitor,
      );
      const latencyUs = microsSince(start);
      stats.recordDecision(
        route,
        request.text,
        answers.map((a) => a.assessment),
        latencyUs,
      );
      return c.json(respond(request, answers, latencyUs));
    });
  modelRoute(
    "/v1/decisions",
    DECISIONS_BODY.needed,
    parseDecisions,
    decisionsResponse,
  );
  modelRoute(
    "/v1/altdecisions",
    ALT_BODY.needed,
    parseAltDecisions,
    altResponse,
  );

  app.post("/v1/playground", async (c) => {
    const request = parsePlayground(
      await readJsonBody(c.req.raw, PLAYGROUND_BODY.needed),
      table,
    );
    const a = assess(
      table,
      prepareText(table, request.text),
      request.question,
      {},
      peek,
    );
    stats.recordPlayground();
    return c.json(playgroundResponse(a, monitor.state(a.question)));
  });

  app.get("/", (c) => {
    c.header("Cache-Control", "no-store");
    return c.html(html);
  });
  app.get("/v1/stats", (c) => {
    c.header("Cache-Control", "no-store");
    return c.json(stats.snapshot());
  });
  app.get("/metrics", (c) => {
    c.header("Content-Type", METRICS_CONTENT_TYPE);
    return c.body(renderMetrics(stats, table, monitor));
  });
  app.get(HEALTH, (c) =>
    c.json({
      ok: true,
      questions: questionNames,
      version: TOOL_VERSION,
      interface_version: INTERFACE_VERSION,
    }));

  app.get(
    "/v1/openapi.json",
    (c) => c.body(OPENAPI_JSON, 200, { "Content-Type": "application/json" }),
  );

  for (const [path, methods] of Object.entries(ROUTES)) {
    app.all(path, methodNotAllowed(methods));
  }
  app.notFound(notFound);
  app.onError((error, c) => errorResponse(error, c, log));
  return app;
}
