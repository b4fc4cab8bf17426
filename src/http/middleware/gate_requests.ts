/**
 * Middleware letting requests through a `RequestGate` (`../gate.ts`): at
 * most its cap in flight at once, none while it drains. A refused request
 * gets 503 with `Retry-After`, and `Connection: close` while draining (the
 * server is going away); `app.onError` writes the reply.
 *
 * @module
 */

import type { MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { RequestGate } from "../gate.ts";

/** Options of `gateRequests`. */
export interface GateRequestsOptions {
  /** The gate requests pass; the server drains the same gate on shutdown. */
  gate: RequestGate;
  /** Seconds a refused client is told to wait before trying again (`Retry-After`). Default 1. */
  retryAfterS?: number;
}

const DEFAULTS = {
  retryAfterS: 1,
} satisfies Omit<Required<GateRequestsOptions>, "gate">;

/**
 * Admits each request through `gate` and lets it leave once answered, or
 * refuses it with 503.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { RequestGate } from "../gate.ts";
 * import { gateRequests } from "./gate_requests.ts";
 * const app = new Hono();
 * app.use(gateRequests({ gate: new RequestGate(64) }));
 * ```
 */
export function gateRequests(options: GateRequestsOptions): MiddlewareHandler {
  const { gate } = options;
  const retryAfter = String(options.retryAfterS ?? DEFAULTS.retryAfterS);
  // Made once and thrown on every refusal: refusing must stay cheap when
  // the service is saturated, and an exception's stack is never shown.
  // `app.onError` reads their message and the headers of their `res`.
  const busy = new HTTPException(503, {
    message:
      `Too many requests in flight: the service answers at most ${gate.maxInFlight} at once; try again shortly`,
    res: new Response(null, { headers: { "retry-after": retryAfter } }),
  });
  const draining = new HTTPException(503, {
    message: "The service is shutting down; try again shortly",
    res: new Response(null, {
      headers: { "retry-after": retryAfter, connection: "close" },
    }),
  });
  // Made once: the request leaves the gate however it ends.
  const leave = () => gate.leave();
  const leaveAndThrow = (e: unknown) => {
    gate.leave();
    throw e;
  };
  // A promise chain, not an async function: one promise per request fewer.
  return function gateRequests(_c, next) {
    const admission = gate.enter();
    if (admission !== "admitted") {
      throw admission === "busy" ? busy : draining;
    }
    return next().then(leave, leaveAndThrow);
  };
}
