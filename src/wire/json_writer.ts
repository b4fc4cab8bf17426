/**
 * A growable byte buffer that JSON replies are written into directly, as
 * UTF-8: pre-encoded fragments (option names, fixed keys) are copied,
 * numbers are printed digit by digit, and only free text (a question name
 * the table does not know, a model name) goes through `JSON.stringify`.
 * The app keeps one writer for every decision reply (`app.ts`): a reply is
 * written whole without yielding, then copied out.
 *
 * @module
 */

import { exactNumber, writeAscii, writeProbabilityKey } from "./json_number.ts";

const encoder = new TextEncoder();

/** Bytes of a JSON text known in advance (keys, option names), encoded once. */
export type Fragment = Uint8Array;

/** Encodes a JSON text once, for `JsonWriter.raw`. */
export function fragment(json: string): Fragment {
  return encoder.encode(json);
}

/** Room kept for the longest number or literal a single call writes. */
const SLACK = 64;

/** Writes JSON text into a reusable byte buffer. */
export class JsonWriter {
  #buf: Uint8Array<ArrayBuffer>;
  #at = 0;

  /** A writer with `capacity` bytes to start with (it grows as needed). */
  constructor(capacity = 16384) {
    this.#buf = new Uint8Array(capacity);
  }

  /** Bytes written so far. */
  get length(): number {
    return this.#at;
  }

  /** Starts a new text at position `at` (0 by default), keeping the buffer. */
  reset(at = 0): void {
    this.#at = at;
  }

  /** The text written so far (a view: valid until the next write or reset). */
  view(): Uint8Array<ArrayBuffer> {
    return this.#buf.subarray(0, this.#at);
  }

  /** The underlying buffer (its length is the writer's capacity). */
  get buffer(): Uint8Array<ArrayBuffer> {
    return this.#buf;
  }

  /** Makes room for `n` more bytes. */
  #room(n: number): Uint8Array<ArrayBuffer> {
    if (this.#at + n > this.#buf.length) {
      const grown = new Uint8Array(
        Math.max(2 * this.#buf.length, this.#at + n),
      );
      grown.set(this.#buf.subarray(0, this.#at));
      this.#buf = grown;
    }
    return this.#buf;
  }

  /**
   * Room for `n` more bytes: the buffer to write them into from `length`
   * on; `advance` then says how far was written.
   */
  reserve(n: number): Uint8Array<ArrayBuffer> {
    return this.#room(n);
  }

  /** Moves the end of the text to `at` (after writing into `reserve`'s buffer). */
  advance(at: number): void {
    this.#at = at;
  }

  /** Copies pre-encoded bytes. */
  raw(bytes: Fragment): this {
    const n = bytes.length;
    const buf = this.#room(n);
    if (n < 32) {
      // A short copy by hand beats the call into `set`.
      const at = this.#at;
      for (let i = 0; i < n; i++) buf[at + i] = bytes[i]!;
    } else buf.set(bytes, this.#at);
    this.#at += n;
    return this;
  }

  /** Writes text that is known to be ASCII (fixed keys, literals, numbers). */
  ascii(text: string): this {
    const buf = this.#room(text.length);
    this.#at = writeAscii(buf, this.#at, text);
    return this;
  }

  /** Writes any text as UTF-8, as given (it must already be JSON). */
  text(json: string): this {
    // UTF-8 needs at most 3 bytes per UTF-16 unit.
    const buf = this.#room(3 * json.length);
    const { written } = encoder.encodeInto(json, buf.subarray(this.#at));
    this.#at += written;
    return this;
  }

  /** Writes `value` as a JSON string. */
  string(value: string): this {
    return this.text(JSON.stringify(value));
  }

  /** Writes a number exactly, as `JSON.stringify` would. */
  number(x: number): this {
    return this.ascii(exactNumber(x));
  }

  /** Writes `true` or `false`. */
  boolean(b: boolean): this {
    return this.ascii(b ? "true" : "false");
  }

  /**
   * Writes a probability whose `probabilityKey` is `key` (see
   * `json_number.ts`): to 6 significant digits, or exactly.
   */
  probability(key: number, p: number): this {
    const buf = this.#room(SLACK);
    this.#at = writeProbabilityKey(buf, this.#at, key, p);
    return this;
  }

  /** Copies the text written so far into a new array. */
  bytes(): Uint8Array<ArrayBuffer> {
    return this.#buf.slice(0, this.#at);
  }
}
