/**
 * Decoding a chunked request body (RFC 9112, 7.1) piece by piece as bytes
 * arrive, refusing it as soon as its chunk sizes pass the body limit.
 *
 * @module
 */

import { latin1, RequestError } from "./http1.ts";

const SIZE_LINE = 0;
const DATA = 1;
const DATA_END = 2;
const TRAILERS = 3;
const DONE = 4;

/** Where a chunked body stands while it is decoded. */
export interface ChunkState {
  /** What comes next: a size line, data, the line break after data, trailers, or nothing. */
  phase: number;
  /** Bytes of data still to come in the current chunk. */
  remaining: number;
  /** Decoded data so far. */
  size: number;
  /** Bytes of trailer lines so far. */
  trailerBytes: number;
}

/** A fresh chunk decoder state. */
export function chunkState(): ChunkState {
  return { phase: SIZE_LINE, remaining: 0, size: 0, trailerBytes: 0 };
}

/** True once the last chunk and its trailers are read. */
export function chunksDone(state: ChunkState): boolean {
  return state.phase === DONE;
}

/**
 * Decodes as much of a chunked body as `buf[start, end)` holds, handing
 * each piece of data to `append`. Returns the index up to which input was
 * consumed. Throws `RequestError` 400 for a malformed chunk, 413 when the
 * data passes `limit` bytes, 431 when the trailers pass `maxTrailerBytes`.
 */
export function decodeChunks(
  buf: Uint8Array,
  start: number,
  end: number,
  state: ChunkState,
  limit: number,
  maxTrailerBytes: number,
  append: (data: Uint8Array) => void,
): number {
  let at = start;
  for (;;) {
    if (state.phase === DONE) return at;
    if (state.phase === DATA) {
      const n = Math.min(state.remaining, end - at);
      if (n > 0) {
        append(buf.subarray(at, at + n));
        at += n;
        state.remaining -= n;
      }
      if (state.remaining > 0) return at;
      state.phase = DATA_END;
      continue;
    }
    if (state.phase === DATA_END) {
      if (at >= end) return at;
      if (buf[at] === 10) at += 1;
      else if (buf[at] === 13) {
        if (at + 1 >= end) return at;
        if (buf[at + 1] !== 10) {
          throw new RequestError(
            400,
            "A chunk's data must end with a line break",
          );
        }
        at += 2;
      } else {
        throw new RequestError(
          400,
          "A chunk's data must end with a line break",
        );
      }
      state.phase = SIZE_LINE;
      continue;
    }
    // A chunk-size line, or a trailer line.
    const lineEnd = lineEndAt(buf, at, end);
    if (lineEnd < 0) {
      if (end - at > 1024) {
        throw new RequestError(
          400,
          "A chunk-size or trailer line is longer than 1024 bytes",
        );
      }
      return at;
    }
    const line = latin1(buf, at, lineEnd).replace(/\r?\n$/, "");
    at = lineEnd;
    if (state.phase === TRAILERS) {
      state.trailerBytes += line.length + 2;
      if (state.trailerBytes > maxTrailerBytes) {
        throw new RequestError(
          431,
          `The trailers are longer than ${maxTrailerBytes} bytes`,
        );
      }
      if (line === "") state.phase = DONE;
      continue;
    }
    const semi = line.indexOf(";");
    const hex = (semi < 0 ? line : line.slice(0, semi)).trim();
    if (!/^[0-9a-fA-F]{1,8}$/.test(hex)) {
      throw new RequestError(
        400,
        `Bad chunk size ${JSON.stringify(hex.slice(0, 20))}`,
      );
    }
    const size = parseInt(hex, 16);
    if (size === 0) {
      state.phase = TRAILERS;
      continue;
    }
    if (state.size + size > limit) {
      throw new RequestError(
        413,
        `The request body is larger than ${limit} bytes`,
      );
    }
    state.size += size;
    state.remaining = size;
    state.phase = DATA;
  }
}

/** The index just past the next LF in `buf[start, end)`, or -1. */
function lineEndAt(buf: Uint8Array, start: number, end: number): number {
  for (let i = start; i < end; i++) if (buf[i] === 10) return i + 1;
  return -1;
}
