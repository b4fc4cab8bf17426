/**
 * The service on `Deno.serve`: the Hono app answers every request, and
 * `shutdown()` drains within a deadline.
 *
 * What `Deno.serve` (Deno 2.9) gives: HTTP/1.1 with keep-alive and
 * TCP_NODELAY, `Content-Length` and chunked framing checked before the
 * app sees a request (400 and a closed connection for framing it cannot
 * trust), a request head over about 400 KB or with more than 100 fields
 * answered 400 and closed. What it does not give, and so this service
 * does not have: a timeout on the request head, an idle keep-alive
 * timeout, a cap on open connections, a way to close a connection whose
 * body never arrives (the 408 is sent, the socket stays open until the
 * client closes it). Put a reverse proxy in front for those (README).
 *
 * The app itself caps requests in flight (503 beyond) and times out bodies
 * (408); see `RequestLimits` in `app.ts`. Shutdown goes in two steps,
 * because `Deno.serve`'s own `shutdown()` cuts off a request whose body is
 * still arriving: first the app's `RequestGate` drains (requests in flight
 * are answered; new requests get 503 with `Connection: close`), then
 * `Deno.serve` stops accepting and closes the idle connections.
 *
 * @module
 */

import type { Hono } from "hono";
import type { RequestGate } from "./gate.ts";

/** How long `shutdown()` waits for requests in flight by default: 5 s. */
export const DRAIN_MS = 5_000;

/** Options of `startServer`. */
export interface ServerOptions {
  hostname: string;
  port: number;
  /** Most milliseconds `shutdown()` waits for requests in flight (default `DRAIN_MS`). */
  drainMs?: number | undefined;
  /** The gate the app's requests pass (see `RequestLimits.gate`); `shutdown()` drains it first. */
  gate?: RequestGate | undefined;
  /** Called once the server listens, with its address. */
  onListen?: ((addr: Deno.NetAddr) => void) | undefined;
  /** Where unexpected errors are reported; stderr by default. */
  log?: ((message: string) => void) | undefined;
}

/** A running server. */
export interface HttpServer {
  /** The address it listens on. */
  readonly addr: Deno.NetAddr;
  /** Settles once the server has stopped (or `shutdown()` gave up waiting). */
  readonly finished: Promise<void>;
  /**
   * Stops accepting connections, closes idle ones, lets requests in flight
   * finish; settles when they have, or after `drainMs`, whichever is first.
   * Resolves `true` when everything finished in time.
   */
  shutdown(): Promise<boolean>;
}

/**
 * Serves `app` on `hostname:port` with `Deno.serve`. Throws (as
 * `Deno.serve` does) when the address cannot be bound, `RangeError` for a
 * `drainMs` that is not a positive integer.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { startServer } from "./server.ts";
 * const app = new Hono().get("/", (c) => c.text("hi"));
 * const server = startServer({ hostname: "127.0.0.1", port: 0 }, app);
 * await server.shutdown();
 * ```
 */
export function startServer(options: ServerOptions, app: Hono): HttpServer {
  const drainMs = options.drainMs ?? DRAIN_MS;
  if (!(Number.isInteger(drainMs) && drainMs > 0)) {
    throw new RangeError(
      `drainMs must be a positive integer: got ${drainMs}`,
    );
  }
  const log = options.log ?? ((m: string) => console.error(m));
  const server = Deno.serve({
    hostname: options.hostname,
    port: options.port,
    onListen: (addr) => options.onListen?.(addr),
    onError: (e) => {
      log(`Internal error: ${e instanceof Error ? e.stack ?? e.message : e}`);
      return Response.json({ error: "Internal server error" }, {
        status: 500,
      });
    },
  }, app.fetch);
  let gaveUp: () => void = () => {};
  const deadline = new Promise<void>((resolve) => {
    gaveUp = resolve;
  });
  const finished = Promise.race([server.finished, deadline]);
  let stopping: Promise<boolean> | null = null;
  const drain = async (): Promise<void> => {
    if (options.gate !== undefined) {
      options.gate.drain();
      await options.gate.idle();
    }
    await server.shutdown();
  };
  return {
    addr: server.addr,
    finished,
    shutdown() {
      if (stopping === null) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const late = new Promise<boolean>((resolve) => {
          timer = setTimeout(() => {
            gaveUp();
            resolve(false);
          }, drainMs);
        });
        stopping = Promise.race([drain().then(() => true), late]).finally(
          () => clearTimeout(timer),
        );
      }
      return stopping;
    },
  };
}
