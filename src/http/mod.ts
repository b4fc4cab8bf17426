/**
 * The HTTP service: `createApp()` builds every route of the interface as a
 * Hono app (call `app.request()` in tests); `startServer()` serves an app
 * on `Deno.serve` and drains it within a deadline; token sources say where
 * the access token comes from.
 *
 * @example
 * ```ts
 * import { appFor, fixedToken, RequestGate, Service, startServer } from "./mod.ts";
 * import { loadBundle } from "../bundle/mod.ts";
 *
 * const table = await loadBundle("demo/bundle");
 * const service = new Service({ table, bundlePath: "demo/bundle", token: fixedToken("s3cret", "example") });
 * const gate = new RequestGate(64);
 * const server = startServer(
 *   { hostname: "127.0.0.1", port: 8010, gate },
 *   appFor(service, { bodyTimeoutMs: 10_000, maxInFlight: 64, gate }),
 * );
 * Deno.addSignalListener("SIGTERM", () => server.shutdown());
 * await server.finished;
 * ```
 *
 * @module
 */

export {
  appFor,
  createApp,
  DEFAULT_REQUEST_LIMITS,
  type RequestLimits,
} from "./app.ts";
export { BODY_TIMEOUT_MS } from "./body.ts";
export {
  DRAIN_MS,
  type HttpServer,
  type ServerOptions,
  startServer,
} from "./server.ts";
export { type AppDeps, Service } from "./service.ts";
export { type DecisionRoute, ROUTE_TABLE, type RouteSpec } from "./routes.ts";
export { MAX_BODY_BYTES, type ServiceTable } from "../wire/mod.ts";
export type { StatsDocument } from "../openapi/mod.ts";
export {
  fileToken,
  type FileTokenOptions,
  fixedToken,
  NO_TOKEN,
  tokenProblem,
  type TokenSource,
} from "./token.ts";
export { type Admission, RequestGate } from "./gate.ts";
