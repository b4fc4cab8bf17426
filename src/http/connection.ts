/**
 * One client connection of the HTTP/1.1 server and its request loop: read
 * a head (within its deadline and size limit), read the body (by length or
 * in chunks, refusing one over the limit as soon as that is known), hand the
 * request to the handler, write the reply in one write, and keep the
 * connection for the next request or close it. Refusals are JSON errors
 * followed by a lingering close. The server (`server.ts`) owns the clock,
 * the deadlines' timer and the connection count.
 *
 * @module
 */

import { chunksDone, chunkState, decodeChunks } from "./chunked.ts";
import {
  findHeadEnd,
  hasHighBytes,
  type HeaderField,
  latin1,
  parseHead,
  RequestError,
  type RequestHead,
  responseHead,
} from "./http1.ts";
import { JsonWriter } from "./json_writer.ts";

/** The limits of the server, all in milliseconds or bytes. */
export interface ServerLimits {
  /** Longest wait for a whole request head, from its first byte. */
  headerTimeoutMs: number;
  /** Longest wait for a whole body from the end of its head; also for a reply to be taken. */
  bodyTimeoutMs: number;
  /** Longest a kept-alive connection may sit idle between requests. */
  idleTimeoutMs: number;
  /** Most open connections; more get 503. */
  maxConnections: number;
  /** Longest request head (request line and header fields). */
  maxHeaderBytes: number;
  /** Largest request body. */
  maxBodyBytes: number;
  /** Longest `shutdown()` waits for requests in flight. */
  drainMs: number;
}

/** A request as the handler sees it. */
export interface IncomingRequest {
  readonly head: RequestHead;
  /** The whole body (a view, valid until the handler's reply is written). */
  readonly body: Uint8Array;
  /** A header field by its lower-case name (the first one); null when absent. */
  header(name: string): string | null;
}

/** What the handler answers. */
export interface Reply {
  status: number;
  /** Header fields, `content-type` included; never `content-length`, `date` or `connection`. */
  headers: readonly HeaderField[];
  /**
   * The body; null when the handler wrote it into the connection's writer
   * (from `BODY_START` on).
   */
  body: Uint8Array | null;
}

/**
 * Answers one request. It may write its body into `w` (reset to
 * `BODY_START`) and reply with `body: null`, so the reply head is put in
 * front of it and both leave in one write.
 */
export type Handler = (
  request: IncomingRequest,
  w: JsonWriter,
) => Reply | Promise<Reply>;

/** Where a handler's body starts in the writer: room for the reply head before it. */
export const BODY_START = 512;

/** What a connection needs of its server. */
export interface ConnectionHost {
  readonly limits: Readonly<ServerLimits>;
  readonly handler: Handler;
  /** Coarse clock in milliseconds (`performance.now()` as of the last timer tick). */
  readonly clock: number;
  /** The `date` header value, and the same as bytes. */
  readonly date: string;
  readonly dateBytes: Uint8Array;
  /** True once the server is shutting down. */
  readonly draining: boolean;
  /** Told of a reply the server gives itself (the path when known). */
  refused(path: string | null, status: number): void;
  log(message: string): void;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const CONTINUE = encoder.encode("HTTP/1.1 100 Continue\r\n\r\n");
/**
 * The header fields of a JSON reply. A reply that uses this very array
 * gets its head from bytes encoded once per status.
 */
export const JSON_FIELDS: readonly HeaderField[] = [[
  "content-type",
  "application/json",
]];
/** Per status, the start of a JSON reply head, up to the content-length value. */
const JSON_HEAD_START = new Map<number, Uint8Array>();
const DATE_FIELD = encoder.encode("\r\ndate: ");
const CLOSE_FIELD = encoder.encode("\r\nconnection: close");
const KEEP_FIELD = encoder.encode("\r\nconnection: keep-alive");
const HEAD_END = encoder.encode("\r\n\r\n");

/** The start of a JSON reply head with `status`, up to the content-length value. */
function jsonHeadStart(status: number): Uint8Array {
  let start = JSON_HEAD_START.get(status);
  if (start === undefined) {
    const head = responseHead(status, JSON_FIELDS, 0, "", false, 1);
    start = encoder.encode(
      head.slice(0, head.indexOf("content-length: ") + 16),
    );
    JSON_HEAD_START.set(status, start);
  }
  return start;
}
/** How long, and for how many bytes, a refused request's remains are read and dropped. */
const LINGER_MS = 2000;
const LINGER_BYTES = 4 * 1_048_576;
/** Buffers past this size are given back after the request that grew them. */
const KEEP_BYTES = 65_536;

/** Connection phases; only the waiting ones have a deadline. */
const IDLE = 0;
const HEAD = 1;
const BODY = 2;
const BUSY = 3;
const WRITE = 4;

/** Closes `conn`, whether or not it is closed already. */
export function close(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // already closed
  }
}

/** One client connection and its request loop. */
export class Connection implements IncomingRequest {
  readonly #server: ConnectionHost;
  readonly #conn: Deno.TcpConn;
  #buf = new Uint8Array(8192);
  /** Unread bytes are `#buf[#start, #end)`. */
  #start = 0;
  #end = 0;
  #w = new JsonWriter(8192);
  #phase = IDLE;
  #deadline = Infinity;
  #closed = false;
  #draining = false;
  head!: RequestHead;
  body: Uint8Array = new Uint8Array(0);

  constructor(server: ConnectionHost, conn: Deno.TcpConn) {
    this.#server = server;
    this.#conn = conn;
  }

  header(name: string): string | null {
    const h = this.head.headers;
    for (let i = 0; i < h.length; i++) if (h[i]![0] === name) return h[i]![1];
    return null;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    close(this.#conn);
  }

  /** Closes the connection now if it waits for a next request; else after the current reply. */
  drain(): void {
    this.#draining = true;
    if (this.#phase === IDLE && this.#start === this.#end) this.close();
  }

  #wait(phase: number, timeoutMs: number): void {
    this.#phase = phase;
    this.#deadline = this.#server.clock + timeoutMs;
  }

  checkDeadline(now: number): void {
    if (this.#closed || now < this.#deadline) return;
    const phase = this.#phase;
    if (phase === HEAD || phase === BODY) {
      const limits = this.#server.limits;
      const what = phase === HEAD
        ? `The request head did not arrive within ${limits.headerTimeoutMs} ms`
        : `The request body did not arrive within ${limits.bodyTimeoutMs} ms`;
      this.#server.refused(phase === BODY ? this.head.path : null, 408);
      this.#deadline = Infinity;
      // Answer, then close (the read in progress then ends).
      const bytes = errorBytes(408, what, this.#server.date);
      const timer = setTimeout(() => this.close(), 1000);
      this.#conn.write(bytes).catch(() => {}).finally(() => {
        clearTimeout(timer);
        this.close();
      });
    } else if (phase === IDLE || phase === WRITE) this.close();
  }

  async run(): Promise<void> {
    try {
      this.#conn.setNoDelay(true);
      while (!this.#closed) {
        if (!(await this.#serveOne())) break;
      }
    } catch (e) {
      if (!this.#closed && !isDisconnect(e)) {
        this.#server.log(`Connection error: ${(e as Error).stack ?? e}`);
      }
    } finally {
      this.close();
    }
  }

  /**
   * Reads more bytes into the buffer, with room for at least `room` of
   * them (moving unread bytes to the front, or growing the buffer); false
   * at the end of the stream.
   */
  async #read(room: number): Promise<boolean> {
    if (this.#end + room > this.#buf.length) {
      const unread = this.#end - this.#start;
      if (unread + room <= this.#buf.length) {
        this.#buf.copyWithin(0, this.#start, this.#end);
      } else {
        const next = new Uint8Array(
          Math.max(2 * this.#buf.length, unread + room),
        );
        next.set(this.#buf.subarray(this.#start, this.#end));
        this.#buf = next;
      }
      this.#start = 0;
      this.#end = unread;
    }
    let n: number | null;
    try {
      n = await this.#conn.read(this.#buf.subarray(this.#end));
    } catch (e) {
      if (this.#closed || isDisconnect(e)) return false;
      throw e;
    }
    if (n === null) return false;
    this.#end += n;
    return true;
  }

  /** Serves one request; false when the connection is to be closed. */
  async #serveOne(): Promise<boolean> {
    const server = this.#server;
    const limits = server.limits;
    // 1. The head.
    if (this.#start === this.#end) {
      if (this.#draining) return false;
      this.#wait(IDLE, limits.idleTimeoutMs);
    } else this.#wait(HEAD, limits.headerTimeoutMs);
    let headEnd = findHeadEnd(this.#buf, this.#start, this.#end);
    while (headEnd < 0) {
      if (this.#end - this.#start > limits.maxHeaderBytes) {
        return await this.#refuse(
          null,
          431,
          `The request head is longer than ${limits.maxHeaderBytes} bytes`,
        );
      }
      const scanned = this.#end - this.#start;
      if (!(await this.#read(4096))) return false;
      if (this.#phase === IDLE) this.#wait(HEAD, limits.headerTimeoutMs);
      // Only the new bytes (and the two before them) can complete the head.
      headEnd = findHeadEnd(
        this.#buf,
        this.#start + Math.max(0, scanned - 2),
        this.#end,
      );
    }
    if (headEnd - this.#start > limits.maxHeaderBytes) {
      return await this.#refuse(
        null,
        431,
        `The request head is longer than ${limits.maxHeaderBytes} bytes`,
      );
    }
    const text = hasHighBytes(this.#buf, this.#start, headEnd)
      ? latin1(this.#buf, this.#start, headEnd)
      : decoder.decode(this.#buf.subarray(this.#start, headEnd));
    this.#start = headEnd;
    let head: RequestHead;
    try {
      head = parseHead(text);
    } catch (e) {
      if (e instanceof RequestError) {
        return await this.#refuse(null, e.status, e.message);
      }
      throw e;
    }
    this.head = head;

    // 2. The body.
    this.#wait(BODY, limits.bodyTimeoutMs);
    if (head.contentLength > limits.maxBodyBytes) {
      return await this.#refuse(
        head.path,
        413,
        `The request body is larger than ${limits.maxBodyBytes} bytes`,
      );
    }
    const wantsBody = head.contentLength > 0 || head.chunked;
    if (head.expectContinue && wantsBody && this.#start === this.#end) {
      await this.#write(CONTINUE);
    }
    if (head.chunked) {
      const ok = await this.#readChunked(head);
      if (ok !== true) return ok;
    } else if (head.contentLength > 0) {
      const n = head.contentLength;
      while (this.#end - this.#start < n) {
        if (!(await this.#read(n - (this.#end - this.#start)))) return false;
      }
      this.body = this.#buf.subarray(this.#start, this.#start + n);
      this.#start += n;
    } else this.body = new Uint8Array(0);

    // 3. The reply.
    this.#phase = BUSY;
    this.#deadline = Infinity;
    const w = this.#w;
    w.reset(BODY_START);
    let reply: Reply;
    try {
      const r = server.handler(this, w);
      reply = r instanceof Promise ? await r : r;
    } catch (e) {
      server.log(
        `Internal error on ${head.method} ${head.path}: ${
          (e as Error)?.stack ?? e
        }`,
      );
      w.reset(BODY_START);
      w.ascii('{"error":"Internal server error"}');
      reply = { status: 500, headers: JSON_FIELDS, body: null };
    }
    const keep = head.keepAlive && !this.#draining && !server.draining;
    await this.#send(reply, !keep, head.method === "HEAD", head.minor);
    this.#tidy();
    return keep;
  }

  /** Reads a chunked body into `body`; true, or the result of a refusal. */
  async #readChunked(head: RequestHead): Promise<true | false> {
    const limits = this.#server.limits;
    const state = chunkState();
    let data = new Uint8Array(4096);
    let size = 0;
    const append = (piece: Uint8Array) => {
      if (size + piece.length > data.length) {
        const grown = new Uint8Array(
          Math.max(2 * data.length, size + piece.length),
        );
        grown.set(data.subarray(0, size));
        data = grown;
      }
      data.set(piece, size);
      size += piece.length;
    };
    for (;;) {
      try {
        this.#start = decodeChunks(
          this.#buf,
          this.#start,
          this.#end,
          state,
          limits.maxBodyBytes,
          limits.maxHeaderBytes,
          append,
        );
      } catch (e) {
        if (e instanceof RequestError) {
          return await this.#refuse(head.path, e.status, e.message);
        }
        throw e;
      }
      if (chunksDone(state)) break;
      if (!(await this.#read(4096))) return false;
    }
    this.body = data.subarray(0, size);
    return true;
  }

  /** Answers a request the server refuses with a JSON error, and closes: returns false. */
  async #refuse(
    path: string | null,
    status: number,
    message: string,
  ): Promise<false> {
    this.#server.refused(path, status);
    this.#phase = WRITE;
    this.#deadline = this.#server.clock + this.#server.limits.bodyTimeoutMs;
    try {
      await this.#write(errorBytes(status, message, this.#server.date));
      await this.#linger();
    } catch {
      // the client went away
    }
    return false;
  }

  /**
   * After refusing a request whose bytes may still be arriving: stops
   * sending, then reads and drops what comes for a little while, so that
   * closing does not reset the connection and destroy the refusal before
   * the client has read it.
   */
  async #linger(): Promise<void> {
    await this.#conn.closeWrite();
    const scratch = new Uint8Array(16384);
    let dropped = 0;
    const timer = setTimeout(() => this.close(), LINGER_MS);
    try {
      for (;;) {
        const n = await this.#conn.read(scratch);
        if (n === null) break;
        dropped += n;
        if (dropped > LINGER_BYTES) break;
      }
    } catch {
      // closed by the timer, or by the client
    } finally {
      clearTimeout(timer);
    }
  }

  /** Writes a reply: its head in front of its body, in one write. */
  async #send(
    reply: Reply,
    close: boolean,
    headOnly: boolean,
    minor: 0 | 1,
  ): Promise<void> {
    const w = this.#w;
    const bodyLength = reply.body === null
      ? w.length - BODY_START
      : reply.body.length;
    let bytes: Uint8Array;
    if (reply.body === null && reply.headers === JSON_FIELDS) {
      // The usual reply: its head from bytes encoded once, just before the body.
      const from = this.#jsonHead(reply.status, bodyLength, close, minor);
      const buf = w.buffer;
      bytes = buf.subarray(from, headOnly ? BODY_START : w.length);
    } else {
      const head = responseHead(
        reply.status,
        reply.headers,
        bodyLength,
        this.#server.date,
        close,
        minor,
      );
      const body = reply.body ?? w.buffer.slice(BODY_START, w.length);
      w.reset(0);
      w.ascii(head);
      if (!headOnly) w.raw(body);
      bytes = w.view();
    }
    this.#phase = WRITE;
    this.#deadline = this.#server.clock + this.#server.limits.bodyTimeoutMs;
    await this.#write(bytes);
    if (close) this.close();
  }

  /**
   * Writes the head of a JSON reply with `status` and a body of `length`
   * bytes so that it ends at `BODY_START`; returns where it starts.
   */
  #jsonHead(
    status: number,
    length: number,
    close: boolean,
    minor: 0 | 1,
  ): number {
    const start = jsonHeadStart(status);
    const date = this.#server.dateBytes;
    const connection = close ? CLOSE_FIELD : minor === 0 ? KEEP_FIELD : null;
    let digits = 1;
    for (let n = length; n >= 10; n = (n / 10) | 0) digits++;
    const size = start.length + digits + DATE_FIELD.length + date.length +
      (connection === null ? 0 : connection.length) + HEAD_END.length;
    const buf = this.#w.buffer;
    const from = BODY_START - size;
    let at = from;
    buf.set(start, at);
    at += start.length;
    for (let i = digits - 1, n = length; i >= 0; i--, n = (n / 10) | 0) {
      buf[at + i] = 48 + (n % 10);
    }
    at += digits;
    buf.set(DATE_FIELD, at);
    at += DATE_FIELD.length;
    buf.set(date, at);
    at += date.length;
    if (connection !== null) {
      buf.set(connection, at);
      at += connection.length;
    }
    buf.set(HEAD_END, at);
    return from;
  }

  async #write(bytes: Uint8Array): Promise<void> {
    let at = 0;
    while (at < bytes.length) {
      at += await this.#conn.write(bytes.subarray(at));
    }
  }

  /** Gives back buffers a large request or reply grew, keeping unread bytes. */
  #tidy(): void {
    this.body = new Uint8Array(0);
    if (this.#w.buffer.length > KEEP_BYTES) this.#w = new JsonWriter(8192);
    if (this.#start === this.#end) {
      this.#start = this.#end = 0;
      if (this.#buf.length > KEEP_BYTES) this.#buf = new Uint8Array(8192);
    } else if (this.#buf.length > KEEP_BYTES) {
      const unread = this.#buf.slice(this.#start, this.#end);
      this.#buf = new Uint8Array(Math.max(8192, unread.length));
      this.#buf.set(unread);
      this.#start = 0;
      this.#end = unread.length;
    }
  }
}

/** A JSON error reply with `connection: close`, as bytes. */
export function errorBytes(
  status: number,
  message: string,
  date: string,
): Uint8Array {
  const body = encoder.encode(JSON.stringify({ error: message }));
  const head = encoder.encode(
    responseHead(status, JSON_FIELDS, body.length, date, true, 1),
  );
  const bytes = new Uint8Array(head.length + body.length);
  bytes.set(head);
  bytes.set(body, head.length);
  return bytes;
}

/** True for the errors a client that goes away causes. */
function isDisconnect(e: unknown): boolean {
  return e instanceof Deno.errors.ConnectionReset ||
    e instanceof Deno.errors.BrokenPipe ||
    e instanceof Deno.errors.BadResource ||
    e instanceof Deno.errors.Interrupted ||
    e instanceof Deno.errors.ConnectionAborted ||
    e instanceof Deno.errors.NotConnected;
}
