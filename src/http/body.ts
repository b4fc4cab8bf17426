/**
 * Reading a JSON request body with a size limit and a deadline.
 *
 * A declared `Content-Length` above the limit is refused with 413 before a
 * byte of the body is read, and a body with one is read in a single call;
 * a body without a length (chunked) is read chunk by chunk until it passes
 * the limit, then refused the same way, without reading the rest. A body
 * that has not arrived whole within the deadline gets 408 (`Deno.serve`
 * adds `Connection: close`, the body being unread); one that cannot be read (the client went away
 * mid-body) gets 400. Deno's HTTP server itself answers 400 and closes
 * the connection for a negative, non-numeric or repeated `Content-Length`
 * before this code runs (the framing of the connection is lost); the check
 * here covers requests handed over in process.
 *
 * @module
 */

import { HTTPException } from "hono/http-exception";
import { badBody, MAX_BODY_BYTES } from "../wire/mod.ts";

/** How long a request body may take to arrive by default: 10 s. */
export const BODY_TIMEOUT_MS = 10_000;

const DIGITS = /^[0-9]+$/;
const decoder = new TextDecoder();

/**
 * Reads the body of `request` as text. Throws `HTTPException` 413 for a
 * body over `limit` bytes (before reading any of it when the length is
 * declared), 400 for a malformed `Content-Length` or a body that could not
 * be read, 408 when the body has not arrived
 * within the time `deadlines` allows.
 *
 * @example
 * ```ts
 * import { readBodyText } from "./body.ts";
 * const text = await readBodyText(new Request("http://x/", { method: "POST", body: "{}" }));
 * ```
 */
export async function readBodyText(
  request: Request,
  limit: number = MAX_BODY_BYTES,
  deadlines: BodyDeadlines = new BodyDeadlines(),
): Promise<string> {
  // `request.body` is not touched unless the length is unknown: on
  // `Deno.serve`, making the stream costs more than reading the body whole.
  const declared = request.headers.get("content-length");
  if (declared !== null) {
    if (!DIGITS.test(declared.trim())) {
      throw new HTTPException(400, {
        message:
          `Content-Length must be a non-negative integer, got "${declared}"`,
      });
    }
    if (Number(declared) > limit) throw tooLarge(limit);
  }
  const deadline = deadlines.watch();
  try {
    if (declared !== null) {
      const bytes = await Promise.race([request.bytes(), deadline.passed]);
      if (bytes === TIMED_OUT) throw tooSlow(deadlines.timeoutMs);
      return decoder.decode(bytes);
    }
    if (request.body === null) return "";
    return await readCapped(
      request.body,
      limit,
      deadline,
      deadlines.timeoutMs,
    );
  } catch (e) {
    if (e instanceof HTTPException) throw e;
    // The client went away or broke the framing mid-body.
    throw new HTTPException(400, {
      message: `The request body could not be read (${
        (e as Error).message ?? e
      })`,
      res: new Response(null, { headers: { connection: "close" } }),
    });
  } finally {
    deadlines.done(deadline);
  }
}

const TIMED_OUT = Symbol("timed out");

/** One body being read: `passed` settles when its time is up. */
class Watch {
  readonly passed: Promise<typeof TIMED_OUT>;
  expire: () => void = () => {};
  constructor(readonly startTick: number) {
    this.passed = new Promise((resolve) => {
      this.expire = () => resolve(TIMED_OUT);
    });
  }
}

/**
 * The deadlines of the bodies being read, kept by one coarse timer rather
 * than a timer per request (a `setTimeout` and `clearTimeout` per request
 * cost more CPU than the rest of reading a body: docs/benchmarks.md).
 * The timer ticks every quarter of the timeout (at most once a second) while
 * some body is being read, and stops once none is; a body's time is up
 * between `timeoutMs` and `timeoutMs` plus one tick after its read began.
 * The timer does not keep the process alive.
 */
export class BodyDeadlines {
  /** The time a body may take, in milliseconds. */
  readonly timeoutMs: number;
  readonly #tickMs: number;
  readonly #ticks: number;
  readonly #pending = new Set<Watch>();
  #tick = 0;
  #timer: ReturnType<typeof setInterval> | null = null;

  /** Throws `RangeError` unless `timeoutMs` is a positive integer. */
  constructor(timeoutMs: number = BODY_TIMEOUT_MS) {
    if (!(Number.isInteger(timeoutMs) && timeoutMs > 0)) {
      throw new RangeError(
        `The body timeout must be a positive integer of ms: got ${timeoutMs}`,
      );
    }
    this.timeoutMs = timeoutMs;
    this.#tickMs = Math.max(1, Math.min(1000, Math.floor(timeoutMs / 4)));
    this.#ticks = Math.ceil(timeoutMs / this.#tickMs) + 1;
  }

  /** Bodies being read now. */
  get pending(): number {
    return this.#pending.size;
  }

  /** Starts watching one body read; call `done` when it ends. */
  watch(): Watch {
    const w = new Watch(this.#tick);
    this.#pending.add(w);
    if (this.#timer === null) {
      this.#timer = setInterval(() => this.#onTick(), this.#tickMs);
      Deno.unrefTimer(this.#timer);
    }
    return w;
  }

  /** Stops watching `w`. */
  done(w: Watch): void {
    this.#pending.delete(w);
  }

  #onTick(): void {
    this.#tick++;
    if (this.#pending.size === 0) {
      clearInterval(this.#timer!);
      this.#timer = null;
      return;
    }
    for (const w of this.#pending) {
      if (this.#tick - w.startTick >= this.#ticks) {
        this.#pending.delete(w);
        w.expire();
      }
    }
  }
}

/**
 * Parses a JSON body; throws `HTTPException` 400 for an empty body or
 * invalid JSON, its message ending with `needed`, the body the route
 * expects.
 */
export function parseJsonBody(text: string, needed: string): unknown {
  if (text.trim() === "") throw badBody("The request body is empty", needed);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw badBody(
      `The request body is not valid JSON (${(e as Error).message})`,
      needed,
    );
  }
}

/**
 * Reads and parses the JSON body of `request`: `readBodyText`, then
 * `parseJsonBody`.
 */
export async function readJsonBody(
  request: Request,
  needed: string,
  limit: number = MAX_BODY_BYTES,
  deadlines: BodyDeadlines = new BodyDeadlines(),
): Promise<unknown> {
  return parseJsonBody(await readBodyText(request, limit, deadlines), needed);
}

/** The 413 for a body over `limit` bytes. */
export function tooLarge(limit: number = MAX_BODY_BYTES): HTTPException {
  return new HTTPException(413, {
    message: `The request body is larger than ${limit} bytes`,
  });
}

/**
 * The 408 for a body that took longer than `ms`. It sets no `Connection`
 * header: `Deno.serve` sends `connection: close` itself for a reply whose
 * request body was left unread, and a second one would repeat the header.
 */
export function tooSlow(ms: number): HTTPException {
  return new HTTPException(408, {
    message: `The request body did not arrive within ${ms} ms`,
  });
}

/** Reads a body of unknown length, giving up as soon as it passes `limit` bytes or `deadline`. */
async function readCapped(
  body: ReadableStream<Uint8Array>,
  limit: number,
  deadline: Watch,
  timeoutMs: number,
): Promise<string> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const read = await Promise.race([reader.read(), deadline.passed]);
    if (read === TIMED_OUT) {
      reader.cancel().catch(() => {});
      throw tooSlow(timeoutMs);
    }
    if (read.done) break;
    size += read.value.byteLength;
    if (size > limit) {
      reader.cancel().catch(() => {});
      throw tooLarge(limit);
    }
    chunks.push(read.value);
  }
  if (chunks.length === 1) return decoder.decode(chunks[0]);
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return decoder.decode(all);
}
