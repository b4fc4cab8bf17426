/**
 * Middleware counting every response under its route's label: refusals of
 * the gate and the token check and every error included, since it runs
 * outside them and `app.onError` has set the response by the time it looks.
 *
 * @module
 */

import type { MiddlewareHandler } from "hono";
import { routeLabel } from "../routes.ts";

/** Options of `countResponses`. */
export interface CountResponsesOptions {
  /** Counts one response: its route label and status code. */
  record: (label: string, status: number) => void;
  /** The label a response to `path` is counted under. Default: the route table's (`routeLabel`), its path or `other`. */
  label?: (path: string) => string;
}

const DEFAULTS = {
  label: routeLabel,
} satisfies Omit<Required<CountResponsesOptions>, "record">;

/**
 * Counts each response once it is answered.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Hono } from "hono";
 * import { countResponses } from "./count_responses.ts";
 * const seen: string[] = [];
 * const app = new Hono();
 * app.use(countResponses({ record: (label, status) => seen.push(`${label} ${status}`) }));
 * app.get("/v1/health", (c) => c.json({ ok: true }));
 * await app.request("/v1/health");
 * assert.deepEqual(seen, ["/v1/health 200"]);
 * ```
 */
export function countResponses(
  options: CountResponsesOptions,
): MiddlewareHandler {
  const { record } = options;
  const label = options.label ?? DEFAULTS.label;
  // A promise chain, not an async function: one promise per request fewer
  // on every route (errors never reach here: `app.onError` has turned
  // them into the response by then).
  return function countResponses(c, next) {
    return next().then(() => record(label(c.req.path), c.res.status));
  };
}
