/**
 * The HTTP service as a Hono app: every route of the route table
 * (`routes.ts`), the access token, JSON errors, statistics. Built by a
 * function so tests can call `app.request()` without a network;
 * `src/cli/serve.ts` puts it on `Deno.serve` (see `server.ts`).
 *
 * Four named middleware do the per-request work every route shares, each
 * one job, outermost first: `countResponses` (every response counted under
 * its route), `gateRequests` (the cap on requests in flight),
 * `clientBodies` (the cap on bodies arriving from one client address) and
 * `tokenAuth` (the access token; not installed when none is configured).
 * Handlers and middleware throw `HTTPException` for a failure, and
 * `app.onError` writes every error reply (`errors.ts`). Everything else is
 * done once, when the app is built.
 *
 * @module
 */

import { type Context, Hono } from "hono";
import { bundleIdOf } from "../live/mod.ts";
import {
  BODY_TIMEOUT_MS,
  BodyDeadlines,
  readBodyText,
  readJsonBody,
} from "./body.ts";
import {
  FEEDBACK_BODY,
  JsonWriter,
  LIVE_RESET_BODY,
  MAX_BODY_BYTES,
  parsePlayground,
  PLAYGROUND_BODY,
} from "../wire/mod.ts";
import { errorResponse, methodNotAllowed, notFound } from "./errors.ts";
import { RequestGate } from "./gate.ts";
import { answerFeedback, answerLiveReset } from "./live_routes/mod.ts";
import {
  Exposition,
  liveStats,
  METRICS_CONTENT_TYPE,
  writeLearnMetrics,
  writeLiveMetrics,
  writeServiceMetrics,
  writeTierMetrics,
} from "../metrics/mod.ts";
import {
  clientBodies,
  countResponses,
  gateRequests,
  tokenAuth,
} from "./middleware/mod.ts";
import {
  type HealthDocument,
  openApiJson,
  type ReadyDocument,
  type StatsDocument,
  type TiersStats,
} from "../openapi/mod.ts";
import {
  type DecisionRouteSpec,
  methodsOf,
  type OtherRoute,
  ROUTE_TABLE,
} from "./routes.ts";
import { type AppDeps, Service } from "./service.ts";
import { readiness } from "./ready.ts";
import { INTERFACE_VERSION, TOOL_VERSION } from "../version.ts";

const JSON_TYPE = "application/json";
// A record, not a list of pairs: the cheaper of the two for `new Response`
// to read on every decision reply.
const JSON_HEADERS: Record<string, string> = { "content-type": JSON_TYPE };
const WRITER_BYTES = 16_384;
const KEPT_WRITER_BYTES = 1_048_576;

/** Limits the app puts on every request. */
export interface RequestLimits {
  /** Most milliseconds a request body may take to arrive; later gets 408 (and `Deno.serve` closes the connection). */
  bodyTimeoutMs: number;
  /** Most requests being answered at once (bodies still arriving included); more get 503. Ignored when `gate` is given. */
  maxInFlight: number;
  /** The gate requests pass (shared with the server, which drains it on shutdown); a new one of `maxInFlight` by default. */
  gate?: RequestGate | undefined;
  /** Most request bodies one client address may have arriving at once; more get 503 (see `middleware/client_bodies.ts`). */
  maxBodiesPerClient: number;
}

/** The request limits the service runs with unless told otherwise. */
export const DEFAULT_REQUEST_LIMITS: Readonly<RequestLimits> = {
  bodyTimeoutMs: BODY_TIMEOUT_MS,
  maxInFlight: 256,
  maxBodiesPerClient: 32,
};

/**
 * Builds the service: every route of `ROUTE_TABLE` (`POST /v1/decide`,
 * `/v1/decisions`, `/v1/altdecisions`, `/v1/playground`, `/v1/feedback`;
 * `GET /`, `/v1/stats`, `/metrics`, `/v1/health`, `/v1/ready`,
 * `/v1/openapi.json`).
 *
 * @example
 * ```ts
 * import { createApp } from "./app.ts";
 * import type { Table } from "../engine/mod.ts";
 * declare const table: Table;
 * const app = createApp({ table, bundlePath: "demo/bundle" });
 * const res = await app.request("/v1/decide", {
 *   method: "POST",
 *   body: JSON.stringify({ state: "my card was stolen" }),
 * });
 * ```
 */
export function createApp(
  deps: AppDeps,
  limits: Partial<RequestLimits> = {},
): Hono {
  return appFor(new Service(deps), limits);
}

let openApi: Promise<string> | null = null;

/**
 * The OpenAPI document's text, built on first use: its schemas (TypeBox, a
 * noticeable share of start-up time) are then loaded by no process that is
 * never asked for the document, such as every command but a `serve` asked
 * for it.
 */
function openApiText(): Promise<string> {
  openApi ??= openApiJson(ROUTE_TABLE);
  return openApi;
}

/** The `tiers` block of `/v1/stats`, present only while a second tier is served. */
function tiersOf(service: Service): { tiers?: TiersStats } {
  const queue = service.served.second;
  const stats = service.tierStats;
  if (queue === null || stats === null) return {};
  return {
    tiers: stats.document(
      queue.options.workers,
      queue.options.queue,
      queue.encoder.inFlight,
    ),
  };
}

/** A route handler. */
type Handler = (c: Context) => Response | Promise<Response>;

/**
 * The Hono app of a running `service`, with `limits` on every request.
 * Throws `RangeError` for a limit that is not a positive integer.
 */
export function appFor(
  service: Service,
  limits: Partial<RequestLimits> = {},
): Hono {
  const { bodyTimeoutMs, maxInFlight, maxBodiesPerClient } = {
    ...DEFAULT_REQUEST_LIMITS,
    ...limits,
  };
  const deadlines = new BodyDeadlines(bodyTimeoutMs);
  const gate = limits.gate ?? new RequestGate(maxInFlight);
  const { stats } = service;
  const app = new Hono();

  app.use(
    countResponses({ record: (label, s) => stats.recordResponse(label, s) }),
  );
  app.use(gateRequests({ gate }));
  app.use(clientBodies({
    perClient: maxBodiesPerClient,
    onRefused: () => stats.transport.clientRefused(),
  }));
  // Without a token every request passes: no layer at all.
  if (service.token.configured || service.feedbackToken.configured) {
    app.use(
      tokenAuth({ source: service.token, feedback: service.feedbackToken }),
    );
  }

  // One writer for every decision reply: `decide` runs to its end without
  // yielding, and the reply leaves as a copy of what was written, the one
  // `new Response` makes of the bytes it is given (the Fetch standard's
  // "copy of the bytes held by" a buffer source; the writer is reused at
  // once). A writer grown past `KEPT_WRITER_BYTES` by a huge reply is not
  // kept.
  let writer = new JsonWriter(WRITER_BYTES);
  const decision = (route: DecisionRouteSpec): Handler => async (c) => {
    const body = await readBodyText(c.req.raw, MAX_BODY_BYTES, deadlines);
    const w = writer;
    w.reset();
    // A decision the second tier answers finishes later, in a writer of
    // its own; every other one is written here without yielding.
    const later = "batch" in route
      ? service.decideBatch(route, body, w)
      : service.decide(route, body, w);
    if (later !== undefined) {
      return new Response((await later).view(), { headers: JSON_HEADERS });
    }
    const res = new Response(w.view(), { headers: JSON_HEADERS });
    if (w.buffer.length > KEPT_WRITER_BYTES) {
      writer = new JsonWriter(WRITER_BYTES);
    }
    return res;
  };

  const others: Record<OtherRoute, Handler> = {
    "/v1/playground": async (c) => {
      const { table } = service.served;
      const request = parsePlayground(
        await readJsonBody(
          c.req.raw,
          PLAYGROUND_BODY.needed,
          MAX_BODY_BYTES,
          deadlines,
        ),
        table,
      );
      stats.recordPlayground();
      return c.json(await service.playground(request));
    },
    "/v1/feedback": async (c) =>
      c.json(
        await answerFeedback(
          service,
          await readJsonBody(
            c.req.raw,
            FEEDBACK_BODY.needed,
            MAX_BODY_BYTES,
            deadlines,
          ),
        ),
      ),
    "/v1/live/reset": async (c) =>
      c.json(
        await answerLiveReset(
          service.live,
          service.served.table,
          await readJsonBody(
            c.req.raw,
            LIVE_RESET_BODY.needed,
            MAX_BODY_BYTES,
            deadlines,
          ),
        ),
      ),
    "/": (c) => {
      c.header("Cache-Control", "no-store");
      return c.html(service.dashboardHtml);
    },
    "/v1/stats": (c) => {
      c.header("Cache-Control", "no-store");
      const snapshot = stats.snapshot();
      const { semanticThresholds, table } = service.served;
      snapshot.bundle.questions = snapshot.bundle.questions.map((q, i) =>
        semanticThresholds[i] == null
          ? q
          : { ...q, table_threshold: table.questions[i]!.calibration.threshold }
      );
      return c.json(
        {
          ...snapshot,
          live: liveStats(service.live, table),
          ...tiersOf(service),
          ...(service.learning === null
            ? {}
            : { learn: service.learning.stats() }),
        } satisfies StatsDocument,
      );
    },
    "/metrics": (c) => {
      c.header("Content-Type", METRICS_CONTENT_TYPE);
      const { table, state, monitor } = service.served;
      const e = new Exposition();
      writeServiceMetrics(e, stats, table, state, monitor);
      writeLiveMetrics(e, liveStats(service.live, table));
      if (service.learning !== null) {
        writeLearnMetrics(e, service.learning.stats());
      }
      const queue = service.served.second;
      const tiers = service.tierStats;
      if (queue !== null && tiers !== null) {
        writeTierMetrics(e, queue, tiers);
      }
      return c.body(e.text());
    },
    "/v1/health": (c) =>
      c.json(
        {
          ok: true,
          questions: [...service.served.questionNames],
          version: TOOL_VERSION,
          interface_version: INTERFACE_VERSION,
          bundle_id: bundleIdOf(service.served.table),
        } satisfies HealthDocument,
      ),
    "/v1/ready": (c) => {
      c.header("Cache-Control", "no-store");
      const doc = readiness(
        bundleIdOf(service.served.table),
        service.live.fleet,
      );
      return c.json(doc satisfies ReadyDocument, doc.ready ? 200 : 503);
    },
    "/v1/openapi.json": async (c) =>
      c.body(await openApiText(), 200, { "Content-Type": JSON_TYPE }),
  };

  for (const route of ROUTE_TABLE) {
    const handler = route.decision === null
      ? others[route.path]
      : decision(route);
    app.on(route.method, route.path, handler);
  }
  for (const path of new Set(ROUTE_TABLE.map((r) => r.path))) {
    app.all(path, methodNotAllowed(methodsOf(path)));
  }
  app.notFound(notFound);
  app.onError((error, c) => errorResponse(error, c, service.log));
  return app;
}
