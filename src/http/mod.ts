/**
 * The HTTP service: `createApp()` builds every route of the interface as a
 * Hono app (call `app.request()` in tests); `startServer()` puts a
 * `Service` on the HTTP/1.1 server with its limits; token sources say where
 * the access token comes from.
 *
 * @example
 * ```ts
 * import { appFor, dispatcher, fixedToken, Service, startServer } from "./mod.ts";
 * import { loadBundle } from "../bundle/files.ts";
 *
 * const table = await loadBundle("demo/bundle");
 * const service = new Service({ table, bundlePath: "demo/bundle", token: fixedToken("s3cret", "example") });
 * const server = startServer(
 *   { hostname: "127.0.0.1", port: 8010, limits: { maxConnections: 64 } },
 *   dispatcher(service, appFor(service)),
 * );
 * Deno.addSignalListener("SIGTERM", () => server.shutdown());
 * await server.finished;
 * ```
 *
 * @module
 */

export { appFor, createApp } from "./app.ts";
export { MAX_BODY_BYTES } from "./body.ts";
export { dispatcher } from "./dispatch.ts";
export {
  DEFAULT_LIMITS,
  type HttpServer,
  type ServerLimits,
  type ServerOptions,
  startServer,
} from "./server.ts";
export { type AppDeps, ROUTES, Service } from "./service.ts";
export { type ServedTable } from "./served.ts";
export { type StatsDocument } from "./stats/document.ts";
export {
  fileToken,
  type FileTokenOptions,
  fixedToken,
  NO_TOKEN,
  type TokenSource,
} from "./token.ts";
