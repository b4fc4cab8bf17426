/**
 * Middleware bounding the request bodies one client address may have
 * arriving at once. The gate (`gate_requests.ts`) bounds requests in flight
 * in total, so without it a few clients sending bodies slowly (or never)
 * could hold every place and starve the rest; with it, a client at its
 * bound gets 503 with `Retry-After` and the places stay for others.
 *
 * A request that may carry a body (any method but GET and HEAD) counts from
 * its arrival until it is answered (the routes read the whole body first,
 * so that is the time the body takes).
 * The address is `Deno.serve`'s remote address, so behind a reverse proxy
 * every request is the proxy's: the proxy buffers bodies (nginx does by
 * default), so they arrive at once and the bound is rarely reached. Without
 * a remote address (`app.request()` in tests) nothing is counted. The map
 * holds an entry per address with a body arriving, so it never holds more
 * entries than requests in flight.
 *
 * @module
 */

import type { MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";

/** Options of `clientBodies`. */
export interface ClientBodiesOptions {
  /** Most bodies one client address may have arriving at once. */
  perClient: number;
  /** Called for each request refused. */
  onRefused?: () => void;
  /** Seconds a refused client is told to wait (`Retry-After`). Default 1. */
  retryAfterS?: number;
}

/** The remote address `Deno.serve` hands the app as its environment, when there is one. */
function clientOf(env: unknown): string | null {
  const addr = (env as { remoteAddr?: { hostname?: unknown } } | undefined)
    ?.remoteAddr;
  return typeof addr?.hostname === "string" ? addr.hostname : null;
}

/**
 * Refuses (503) a request with a body from a client address that already
 * has `perClient` bodies arriving. Throws `RangeError` unless `perClient`
 * is a positive integer.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { clientBodies } from "./client_bodies.ts";
 * const app = new Hono();
 * app.use(clientBodies({ perClient: 32 }));
 * ```
 */
export function clientBodies(options: ClientBodiesOptions): MiddlewareHandler {
  const { perClient } = options;
  if (!(Number.isInteger(perClient) && perClient > 0)) {
    throw new RangeError(
      `perClient must be a positive integer: got ${perClient}`,
    );
  }
  const arriving = new Map<string, number>();
  const refused = new HTTPException(503, {
    message:
      `Too many request bodies arriving from your address: at most ${perClient} at once; try again shortly`,
    res: new Response(null, {
      headers: { "retry-after": String(options.retryAfterS ?? 1) },
    }),
  });
  return function clientBodies(c, next) {
    // The method, not `c.req.raw.body`: reading that property makes the body
    // a stream, which takes the fast path from every body read after it.
    const method = c.req.method;
    const client = method === "GET" || method === "HEAD"
      ? null
      : clientOf(c.env);
    if (client === null) return next();
    const n = arriving.get(client) ?? 0;
    if (n >= perClient) {
      options.onRefused?.();
      throw refused;
    }
    arriving.set(client, n + 1);
    const leave = () => {
      const left = arriving.get(client)! - 1;
      if (left === 0) arriving.delete(client);
      else arriving.set(client, left);
    };
    return next().then(leave, (e: unknown) => {
      leave();
      throw e;
    });
  };
}
