/**
 * The HTTP service as a Hono app: every route of the interface, the access
 * token, JSON errors, statistics. Built by a function so tests can call
 * `app.request()` without a network; `src/cli/serve.ts` puts it behind the
 * HTTP/1.1 server of `server.ts`, which answers the decision routes through
 * the same `Service` without building a `Request` (see `dispatch.ts`).
 *
 * @module
 */

import { Hono } from "hono";
import { assess, prepareText } from "../engine/answer.ts";
import { readBodyText, readJsonBody } from "./body.ts";
import { errorResponse, methodNotAllowed, notFound } from "./errors.ts";
import { JsonWriter } from "./json_writer.ts";
import {
  countFeedback,
  FEEDBACK_BODY,
  logFailure,
  parseFeedback,
  traceLines,
} from "./live/feedback.ts";
import { renderLiveMetrics } from "./live/metrics.ts";
import { liveStats } from "./live/stats.ts";
import { METRICS_CONTENT_TYPE, renderMetrics } from "./metrics.ts";
import { OPENAPI_JSON } from "./openapi.ts";
import {
  parsePlayground,
  PLAYGROUND_BODY,
  playgroundResponse,
} from "./playground.ts";
import { type AppDeps, HEALTH, ROUTES, Service } from "./service.ts";
import { DECISION_ROUTES } from "./stats/service_stats.ts";
import { INTERFACE_VERSION, TOOL_VERSION } from "../version.ts";

export { type AppDeps, ROUTES };

const JSON_TYPE = "application/json";

/**
 * Builds the service. Routes: `POST /v1/decide`, `/v1/decisions`,
 * `/v1/altdecisions`, `/v1/playground`, `/v1/feedback`; `GET /`, `/v1/stats`, `/metrics`,
 * `/v1/health`, `/v1/openapi.json`.
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
export function createApp(deps: AppDeps): Hono {
  return appFor(new Service(deps));
}

/** The Hono app of a running `service`. */
export function appFor(service: Service): Hono {
  const { stats } = service;
  const app = new Hono();

  // One layer: the token check, then the response counted under its route.
  app.use("*", async (c, next) => {
    const path = c.req.path;
    const checked = service.check(
      c.req.method,
      path,
      (name) => c.req.raw.headers.get(name),
    );
    const refusal = checked instanceof Promise ? await checked : checked;
    if (refusal !== null) {
      const res = c.json({ error: refusal.message }, refusal.status);
      res.headers.set("WWW-Authenticate", refusal.challenge);
      stats.recordResponse(service.routeLabel(path), res.status);
      return res;
    }
    await next();
    stats.recordResponse(service.routeLabel(path), c.res.status);
  });

  for (const route of DECISION_ROUTES) {
    app.post(route, async (c) => {
      const body = await readBodyText(c.req.raw);
      const w = new JsonWriter(4096);
      const status = service.decide(route, body, w);
      return new Response(w.bytes(), {
        status,
        headers: { "content-type": JSON_TYPE },
      });
    });
  }

  app.post("/v1/playground", async (c) => {
    const { table, monitor, peek, questionNames } = service.served;
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
    return c.json(
      playgroundResponse(a, monitor.state(a.question), questionNames),
    );
  });

  app.post("/v1/feedback", async (c) => {
    const served = service.served;
    const items = parseFeedback(
      await readJsonBody(c.req.raw, FEEDBACK_BODY.needed),
      served.table,
    );
    if (service.feedbackLog !== null) {
      try {
        await service.feedbackLog(traceLines(items, new Date()));
      } catch (e) {
        service.log(`Feedback log: ${(e as Error)?.message ?? String(e)}`);
        throw logFailure(e);
      }
    }
    return c.json(countFeedback(service.live, served, items));
  });

  app.get("/", (c) => {
    c.header("Cache-Control", "no-store");
    return c.html(service.dashboardHtml);
  });
  app.get("/v1/stats", (c) => {
    c.header("Cache-Control", "no-store");
    return c.json({
      ...stats.snapshot(),
      live: liveStats(service.live, service.served.table),
    });
  });
  app.get("/metrics", (c) => {
    c.header("Content-Type", METRICS_CONTENT_TYPE);
    const { table, monitor } = service.served;
    return c.body(
      renderMetrics(stats, table, monitor) +
        renderLiveMetrics(liveStats(service.live, table)),
    );
  });
  app.get(HEALTH, (c) =>
    c.json({
      ok: true,
      questions: service.served.questionNames,
      version: TOOL_VERSION,
      interface_version: INTERFACE_VERSION,
    }));
  app.get(
    "/v1/openapi.json",
    (c) => c.body(OPENAPI_JSON, 200, { "Content-Type": JSON_TYPE }),
  );

  for (const [path, methods] of Object.entries(ROUTES)) {
    app.all(path, methodNotAllowed(methods));
  }
  app.notFound(notFound);
  app.onError((error, c) => errorResponse(error, c, service.log));
  return app;
}
