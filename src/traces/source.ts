/**
 * Trace sources: files and standard input opened as byte streams, with their
 * size when known, and a look at their first bytes (gzip's magic, the format)
 * that leaves the stream whole.
 *
 * @module
 */

import {
  formatByName,
  gzipByName,
  SNIFF_LENGTH,
  STDIN,
  type TraceFormat,
} from "./format.ts";
import type { TraceReadOptions } from "./types.ts";

/** A source opened for reading. */
export interface Source {
  /** The name in messages: the path, or `stdin`. */
  name: string;
  stream: ReadableStream<Uint8Array>;
  size: number | null;
  /** Whether it is standard input. */
  stdin: boolean;
  /** Whether its name says `.gz`. */
  gzNamed: boolean;
  /** Its format when its name fixes it. */
  named: TraceFormat | undefined;
  close(): void;
}

/** Rewrites an operating-system error's message, keeping its class. */
export function osError(e: unknown, message: string): Error {
  const Class = e instanceof Error
    ? e.constructor as new (message: string) => Error
    : Error;
  return new Class(message);
}

/** Opens `path` (`-`: standard input); a missing file or a folder is an error naming the path. */
export async function openSource(
  path: string,
  options: TraceReadOptions,
): Promise<Source> {
  if (path === STDIN) {
    const stream = options.stdin ?? Deno.stdin.readable;
    return {
      name: "stdin",
      stdin: true,
      stream,
      size: null,
      gzNamed: false,
      named: undefined,
      close: () => {},
    };
  }
  const cannot = (why: string) => `Cannot read traces ${path}: ${why}`;
  let file: Deno.FsFile;
  let size: number;
  try {
    const info = await Deno.stat(path);
    if (info.isDirectory) throw new Deno.errors.IsADirectory(path);
    file = await Deno.open(path);
    size = info.size;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw osError(e, cannot("no such file"));
    }
    if (e instanceof Deno.errors.IsADirectory) {
      throw osError(e, cannot("it is a folder"));
    }
    throw osError(e, cannot(e instanceof Error ? e.message : String(e)));
  }
  return {
    name: path,
    stdin: false,
    stream: file.readable,
    size,
    gzNamed: gzipByName(path),
    named: formatByName(path),
    close: () => {
      try {
        file.close();
      } catch { /* closed when its stream ended */ }
    },
  };
}

/** A stream yielding `head`'s chunks, then the rest of `reader`'s. */
function resumed(
  head: Uint8Array[],
  reader: ReadableStreamDefaultReader<Uint8Array>,
  done: boolean,
): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(c) {
      for (const chunk of head) c.enqueue(chunk);
      if (done) c.close();
    },
    async pull(c) {
      const r = await reader.read();
      if (r.done) c.close();
      else c.enqueue(r.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/** Reads from `stream` until `enough(head)` or its end; returns the head and the whole stream again. */
export async function peek(
  stream: ReadableStream<Uint8Array>,
  enough: (head: Uint8Array) => boolean,
): Promise<{ head: Uint8Array; stream: ReadableStream<Uint8Array> }> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let head = new Uint8Array(0);
  let done = false;
  while (!enough(head)) {
    const r = await reader.read();
    if (r.done) {
      done = true;
      break;
    }
    chunks.push(r.value);
    const next = new Uint8Array(head.length + r.value.length);
    next.set(head);
    next.set(r.value, head.length);
    head = next;
  }
  return { head, stream: resumed(chunks, reader, done) };
}

/** Whether `head` holds a non-blank character, and for standard input its whole first line. */
export function sniffable(named: boolean): (head: Uint8Array) => boolean {
  return (head) => {
    if (head.length >= SNIFF_LENGTH) return true;
    const text = new TextDecoder().decode(head).replace(/^\ufeff/, "");
    const start = text.search(/\S/);
    if (start < 0) return false;
    return named || text[start] === "[" || text[start] === "{" ||
      text.indexOf("\n", start) >= 0;
  };
}
