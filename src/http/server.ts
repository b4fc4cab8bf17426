/**
 * The HTTP/1.1 server the service runs on: `Deno.listen` and a small
 * connection loop, so that every limit a public service needs is ours to
 * set (`Deno.serve` has no header, body or idle timeout and no connection
 * cap), and so that a reply goes out as one write.
 *
 * Per connection: TCP_NODELAY is set once; requests are read one at a time
 * (pipelined requests wait their turn); each reply is written whole before
 * the next request is read. Limits (see `ServerLimits`):
 *
 * - a request head must arrive within `headerTimeoutMs` of its first byte
 *   (else 408 and the connection is closed), and be at most
 *   `maxHeaderBytes` long with at most 100 fields (else 431);
 * - a body must arrive within `bodyTimeoutMs` of the end of its head (else
 *   408); one larger than `maxBodyBytes` gets 413 as soon as that is known
 *   (from `Content-Length` before any body byte is read, or while chunks
 *   arrive), and the connection is closed;
 * - a kept-alive connection idle for `idleTimeoutMs` is closed;
 * - a reply the client does not read within `bodyTimeoutMs` closes the
 *   connection;
 * - beyond `maxConnections` open connections, a new one gets 503 and is
 *   closed at once;
 * - `shutdown()` stops accepting, closes idle connections, lets requests
 *   in flight finish (answered with `connection: close`), and closes what
 *   is left after `drainMs`.
 *
 * Deadlines are checked by one timer for all connections, not one timer
 * per request.
 *
 * @module
 */

import {
  close,
  Connection,
  type Handler,
  JSON_FIELDS,
  type ServerLimits,
} from "./connection.ts";
import { responseHead } from "./http1.ts";

export {
  BODY_START,
  type Handler,
  type IncomingRequest,
  JSON_FIELDS,
  type Reply,
  type ServerLimits,
} from "./connection.ts";

const encoder = new TextEncoder();

/** The limits the service runs with unless told otherwise. */
export const DEFAULT_LIMITS: Readonly<ServerLimits> = {
  headerTimeoutMs: 10_000,
  bodyTimeoutMs: 10_000,
  idleTimeoutMs: 30_000,
  maxConnections: 512,
  maxHeaderBytes: 16_384,
  maxBodyBytes: 1_048_576,
  drainMs: 5_000,
};

/** Options of `startServer`. */
export interface ServerOptions {
  hostname: string;
  port: number;
  limits?: Partial<ServerLimits> | undefined;
  /** Told of replies the server itself gives (408, 413, 431, 503, malformed requests): the path (null when unknown) and status. */
  onRefusal?: ((path: string | null, status: number) => void) | undefined;
  /** Where unexpected errors are reported; stderr by default. */
  log?: ((message: string) => void) | undefined;
}

/** A running server. */
export interface HttpServer {
  /** The address it listens on. */
  readonly addr: Deno.NetAddr;
  /** The limits in force. */
  readonly limits: Readonly<ServerLimits>;
  /** Open connections now. */
  readonly connections: number;
  /** Settles once the server has stopped and every connection is closed. */
  readonly finished: Promise<void>;
  /** Stops the server gracefully (see the module doc); settles when it has stopped. */
  shutdown(): Promise<void>;
}

/**
 * Listens on `hostname:port` and answers every request with `handler`.
 * Throws (as `Deno.listen` does) when the address cannot be bound.
 */
export function startServer(
  options: ServerOptions,
  handler: Handler,
): HttpServer {
  const limits: ServerLimits = { ...DEFAULT_LIMITS, ...options.limits };
  checkLimits(limits);
  const listener = Deno.listen({
    hostname: options.hostname,
    port: options.port,
  });
  return new Server(listener, limits, handler, options);
}

function checkLimits(l: ServerLimits): void {
  for (const [name, value] of Object.entries(l)) {
    if (!(Number.isInteger(value) && value > 0)) {
      throw new RangeError(
        `Server limit ${name} must be a positive integer: got ${value}`,
      );
    }
  }
}

class Server implements HttpServer {
  readonly addr: Deno.NetAddr;
  readonly limits: Readonly<ServerLimits>;
  readonly finished: Promise<void>;
  readonly #listener: Deno.Listener<Deno.TcpConn, Deno.NetAddr>;
  readonly #handler: Handler;
  readonly #onRefusal: (path: string | null, status: number) => void;
  readonly #log: (message: string) => void;
  readonly #open = new Set<Connection>();
  readonly #sweep: ReturnType<typeof setInterval>;
  /** Coarse clock (ms), moved by the sweep: deadlines need no clock call per request. */
  clock = performance.now();
  /** The `date` header, kept current by the sweep. */
  date = new Date().toUTCString();
  /** The same, as bytes. */
  dateBytes = encoder.encode(this.date);
  draining = false;
  #drained: () => void = () => {};
  #accepting: Promise<void>;

  constructor(
    listener: Deno.Listener<Deno.TcpConn, Deno.NetAddr>,
    limits: ServerLimits,
    handler: Handler,
    options: ServerOptions,
  ) {
    this.#listener = listener;
    this.addr = listener.addr;
    this.limits = limits;
    this.#handler = handler;
    this.#onRefusal = options.onRefusal ?? (() => {});
    this.#log = options.log ?? ((m) => console.error(m));
    const shortest = Math.min(
      limits.headerTimeoutMs,
      limits.bodyTimeoutMs,
      limits.idleTimeoutMs,
    );
    const tick = Math.max(10, Math.min(1000, Math.floor(shortest / 4)));
    this.#sweep = setInterval(() => this.#check(), tick);
    this.#accepting = this.#accept();
    this.finished = new Promise<void>((resolve) => {
      this.#drained = resolve;
    });
  }

  get connections(): number {
    return this.#open.size;
  }

  get handler(): Handler {
    return this.#handler;
  }

  refused(path: string | null, status: number): void {
    this.#onRefusal(path, status);
  }

  log(message: string): void {
    this.#log(message);
  }

  async #accept(): Promise<void> {
    for (;;) {
      let conn: Deno.TcpConn;
      try {
        conn = await this.#listener.accept();
      } catch (e) {
        if (this.draining || e instanceof Deno.errors.BadResource) return;
        // Out of file descriptors and the like: wait a little, keep serving.
        this.#log(`Cannot accept a connection: ${(e as Error).message}`);
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      if (this.draining) {
        close(conn);
        continue;
      }
      if (this.#open.size >= this.limits.maxConnections) {
        this.#refuseConnection(conn);
        continue;
      }
      const c = new Connection(this, conn);
      this.#open.add(c);
      c.run().finally(() => {
        this.#open.delete(c);
        if (this.draining && this.#open.size === 0) this.#stop();
      });
    }
  }

  /** Answers a connection past the cap with 503 and closes it. */
  #refuseConnection(conn: Deno.TcpConn): void {
    this.refused(null, 503);
    const body = encoder.encode(JSON.stringify({
      error:
        `Too many connections: the server holds at most ${this.limits.maxConnections} at once; try again shortly`,
    }));
    const head = responseHead(
      503,
      [...JSON_FIELDS, ["retry-after", "1"]],
      body.length,
      this.date,
      true,
      1,
    );
    const bytes = new Uint8Array(head.length + body.length);
    encoder.encodeInto(head, bytes);
    bytes.set(body, head.length);
    // The refusal fits in any socket buffer; never wait long for it.
    const timer = setTimeout(() => close(conn), 1000);
    conn.write(bytes).catch(() => {}).finally(() => {
      clearTimeout(timer);
      close(conn);
    });
  }

  /** Moves the clock and the date, and ends connections past their deadline. */
  #check(): void {
    this.clock = performance.now();
    const date = new Date().toUTCString();
    if (date !== this.date) {
      this.date = date;
      this.dateBytes = encoder.encode(date);
    }
    for (const c of this.#open) c.checkDeadline(this.clock);
  }

  shutdown(): Promise<void> {
    if (!this.draining) {
      this.draining = true;
      try {
        this.#listener.close();
      } catch {
        // already closed
      }
      for (const c of this.#open) c.drain();
      if (this.#open.size === 0) this.#stop();
      const force = setTimeout(() => {
        for (const c of this.#open) c.close();
        this.#stop();
      }, this.limits.drainMs);
      this.finished.finally(() => clearTimeout(force));
    }
    return this.finished;
  }

  #stopped = false;
  #stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    clearInterval(this.#sweep);
    this.#accepting.finally(() => this.#drained());
  }
}
