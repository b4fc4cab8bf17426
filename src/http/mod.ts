/**
 * The HTTP service: `createApp()` builds every route of the interface as a
 * Hono app (call `app.request()` in tests, or hand `app.fetch` to
 * `Deno.serve`); token sources say where the access token comes from.
 *
 * @example
 * ```ts
 * import { createApp, fixedToken } from "./src/http/mod.ts";
 * import { loadBundle } from "./src/bundle/files.ts";
 *
 * const table = await loadBundle("demo/bundle");
 * const app = createApp({ table, bundlePath: "demo/bundle", token: fixedToken("s3cret", "example") });
 * Deno.serve({ hostname: "127.0.0.1", port: 8010 }, app.fetch);
 * ```
 *
 * @module
 */

export { type AppDeps, createApp, ROUTES } from "./app.ts";
export { MAX_BODY_BYTES } from "./body.ts";
export {
  fileToken,
  type FileTokenOptions,
  fixedToken,
  NO_TOKEN,
  type TokenSource,
} from "./token.ts";
export { type StatsDocument } from "./stats.ts";
