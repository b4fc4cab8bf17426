/**
 * The service on `Deno.serve`: the Hono app answers every request,
 * `shutdown()` drains within a deadline, and the listener survives running
 * out of file descriptors.
 *
 * What `Deno.serve` (Deno 2.9) gives: HTTP/1.1 with keep-alive and
 * TCP_NODELAY, `Content-Length` and chunked framing checked before the
 * app sees a request (400 and a closed connection for framing it cannot
 * trust; malformed chunk framing closes the connection without a status
 * line), a request head over about 64 KiB or with more than 128 fields
 * answered 400 and closed. What it does not give, and so this service
 * does not have: a timeout on the request head, an idle keep-alive
 * timeout, a cap on open connections, a way to close a connection whose
 * body never arrives (the 408 is sent, the socket stays open until the
 * client closes it). Put a reverse proxy in front for those (README).
 *
 * Descriptors: when `accept` fails (`EMFILE`, too many open files),
 * `Deno.serve` closes its listener and rejects `finished`, with the
 * connections it already accepted still served. Here that failure is
 * counted (`onAcceptError`), those connections are drained (requests in
 * flight are answered, idle connections closed, which gives their
 * descriptors back), and the same address is listened on again after a
 * backoff (`RELISTEN_MIN_MS` doubling to `RELISTEN_MAX_MS`), retried
 * until it succeeds. Meanwhile new connections are refused by the kernel;
 * the process never exits for it.
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
/** First wait before listening again after the listener failed. */
export const RELISTEN_MIN_MS = 50;
/** Longest wait between attempts to listen again. */
export const RELISTEN_MAX_MS = 1_000;

/** Options of `startServer`. */
export interface ServerOptions {
  hostname: string;
  port: number;
  /** Most milliseconds `shutdown()` waits for requests in flight (default `DRAIN_MS`). */
  drainMs?: number | undefined;
  /** The gate the app's requests pass (see `RequestLimits.gate`); `shutdown()` drains it first. */
  gate?: RequestGate | undefined;
  /** Called once the server listens, with its address (not again after a re-listen). */
  onListen?: ((addr: Deno.NetAddr) => void) | undefined;
  /** Where unexpected errors are reported; stderr by default. */
  log?: ((message: string) => void) | undefined;
  /** Where a failed listener is reported, one line each time; stderr by default. */
  warn?: ((message: string) => void) | undefined;
  /**
   * Called when the listener failed (`accept` error, such as too many open
   * files) or listening again failed, with the error; one line is also
   * given to `warn`.
   */
  onAcceptError?: ((error: unknown) => void) | undefined;
  /** Called each time the address is listened on again after a failure. */
  onRelisten?: (() => void) | undefined;
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

/** The first line of an error's message. */
function firstLine(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text.split("\n")[0]!;
}

/**
 * Serves `app` on `hostname:port` with `Deno.serve`, listening again
 * whenever the listener fails (see the module doc). Throws (as
 * `Deno.serve` does) when the address cannot be bound at first,
 * `RangeError` for a `drainMs` that is not a positive integer.
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
  const warn = options.warn ?? ((m: string) => console.error(m));
  const onError = (e: unknown) => {
    log(`Internal error: ${e instanceof Error ? e.stack ?? e.message : e}`);
    return Response.json({ error: "Internal server error" }, {
      status: 500,
    });
  };
  /** A listener and its requests whose handler has not finished yet. */
  interface Generation {
    server: Deno.HttpServer<Deno.NetAddr>;
    inFlight: number;
    /** Called when `inFlight` drops to 0. */
    quiet: (() => void) | null;
  }
  const listen = (
    port: number,
    onListen: (addr: Deno.NetAddr) => void,
  ): Generation => {
    const g: Generation = { server: null!, inFlight: 0, quiet: null };
    g.server = Deno.serve(
      { hostname: options.hostname, port, onListen, onError },
      (request, info) => {
        g.inFlight++;
        let reply: Response | Promise<Response>;
        try {
          reply = app.fetch(request, info);
        } catch (e) {
          left(g);
          throw e;
        }
        // No promise more per request than the app makes.
        if (!(reply instanceof Promise)) {
          left(g);
          return reply;
        }
        return reply.finally(() => left(g));
      },
    );
    return g;
  };
  const left = (g: Generation) => {
    if (--g.inFlight === 0) g.quiet?.();
  };
  /**
   * Closes a failed listener's connections once none of its requests is
   * being answered (`Deno.serve`'s shutdown would cut off a body still
   * arriving; the app's body timeout ends those).
   */
  const retire = async (g: Generation): Promise<void> => {
    if (g.inFlight > 0) {
      await new Promise<void>((resolve) => g.quiet = resolve);
    }
    await g.server.shutdown().catch(() => {});
  };

  let current = listen(options.port, (addr) => options.onListen?.(addr));
  const addr = current.server.addr;
  /** Listeners that failed, their connections still open. */
  const failed = new Set<Generation>();
  let stopped = false;
  let wake: () => void = () => {};
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const acceptError = (e: unknown, waitMs: number) => {
    options.onAcceptError?.(e);
    warn(
      `cannot accept connections on ${addr.hostname}:${addr.port} (${
        firstLine(e)
      }); connections already open are still served; listening again in ${waitMs} ms`,
    );
  };

  const run = async (): Promise<void> => {
    let waitMs = RELISTEN_MIN_MS;
    for (;;) {
      const since = performance.now();
      try {
        await current.server.finished;
        return;
      } catch (e) {
        if (stopped) return;
        const dead = current;
        failed.add(dead);
        retire(dead).finally(() => failed.delete(dead));
        // A listener that served a while starts the backoff over.
        waitMs = performance.now() - since > RELISTEN_MAX_MS
          ? RELISTEN_MIN_MS
          : waitMs;
        acceptError(e, waitMs);
      }
      for (;;) {
        await pause(waitMs);
        waitMs = Math.min(RELISTEN_MAX_MS, waitMs * 2);
        if (stopped) return;
        try {
          current = listen(addr.port, () => {});
          options.onRelisten?.();
          break;
        } catch (e) {
          acceptError(e, waitMs);
        }
      }
    }
  };

  let gaveUp: () => void = () => {};
  const deadline = new Promise<void>((resolve) => {
    gaveUp = resolve;
  });
  const finished = Promise.race([run(), deadline]);
  let stopping: Promise<boolean> | null = null;
  const drain = async (): Promise<void> => {
    if (options.gate !== undefined) {
      options.gate.drain();
      await options.gate.idle();
    }
    stopped = true;
    wake();
    await Promise.all(
      [current, ...failed].map((g) => g.server.shutdown().catch(() => {})),
    );
  };
  return {
    addr,
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
