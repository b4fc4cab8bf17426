/**
 * What `predict` reads: its input (files named on the command line, one
 * after the other, or standard input), decided to be plain text, JSON
 * Lines or CSV/TSV (the texts read from one column by its name), and
 * yielded as texts in bounded groups, as they are read.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { parse as csvStream } from "csv-parse/stream";
import { stateText } from "../engine/mod.ts";
import { MAX_BODY_BYTES } from "../wire/mod.ts";

/** How input lines are read. */
export const INPUT_MODES = ["auto", "text", "jsonl", "csv", "tsv"] as const;
/** One of `INPUT_MODES`. */
export type InputMode = (typeof INPUT_MODES)[number];

/**
 * Most bytes of one input line (its newline excluded): 1 MiB, what `serve`
 * takes as a request body. A longer line gets an error on its output line
 * and is not read.
 */
export const MAX_LINE_BYTES = MAX_BODY_BYTES;

/** One input record, read: the text and its id, or why it cannot be answered (and its id, when it has one). */
export type ReadLine = { text: string; id?: unknown } | {
  error: string;
  id?: unknown;
};

/**
 * Reads one JSON Lines input line: an object with a string `text` (or
 * `state`) and an optional `id`.
 */
export function readJsonLine(line: string, at: number): ReadLine {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (e) {
    return {
      error: `line ${at}: not JSON (${(e as Error).message.split("\n")[0]})`,
    };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { error: `line ${at}: must be a JSON object with "text"` };
  }
  const o = value as Record<string, unknown>;
  const id = "id" in o ? { id: o.id } : {};
  if (!("text" in o) && !("state" in o)) {
    const fields = Object.keys(o).map((k) => JSON.stringify(k)).join(", ");
    return {
      error: `line ${at}: has no "text" field (${
        fields === "" ? "it has no fields" : `its fields: ${fields}`
      })`,
      ...id,
    };
  }
  const field = "text" in o ? "text" : "state";
  const given = o[field];
  // As /v1/decide reads a state: a string, or an object read as its JSON.
  const isObject = typeof given === "object" && given !== null &&
    !Array.isArray(given);
  if (typeof given !== "string" && !isObject) {
    return {
      error: `line ${at}: "${field}" must be a string or a JSON object: got ${
        JSON.stringify(given)?.slice(0, 40) ?? "none"
      }`,
      ...id,
    };
  }
  const text = stateText(given);
  return "id" in o ? { text, id: o.id } : { text };
}

/** Whether a line looks like JSON Lines input (an object with "text" or "state"). */
export function looksLikeJsonLine(line: string): boolean {
  if (!line.trimStart().startsWith("{")) return false;
  const read = readJsonLine(line, 0);
  return !("error" in read);
}

/** The cells of a header line, split on `delimiter`, quotes and spaces around them removed. */
function headerCells(line: string, delimiter: string): string[] {
  return line.replace(/^\uFEFF/, "").split(delimiter).map((c) =>
    c.trim().replace(/^"(.*)"$/, "$1").trim()
  );
}

/**
 * The CSV or TSV a first line is the header of, or null: two or more cells
 * (comma or tab separated), every one a name (letters, digits, `_`, `-`,
 * `.`; no spaces), one of them the text column `column` (any case). So
 * `text,label` is a header; `text, please help` or most sentences with a
 * comma are not.
 */
export function csvHeaderOf(
  line: string,
  column: string,
): "csv" | "tsv" | null {
  for (const [mode, d] of [["tsv", "\t"], ["csv", ","]] as const) {
    if (!line.includes(d)) continue;
    const cells = headerCells(line, d);
    if (
      cells.length >= 2 &&
      cells.every((c) => /^[\p{L}\p{N}_.-]+$/u.test(c)) &&
      cells.some((c) => c.toLowerCase() === column.toLowerCase())
    ) {
      return mode;
    }
  }
  return null;
}

/** The mode a file name says (`.csv`, `.tsv`, `.jsonl`, `.txt`, and those gzipped are not read), or null. */
export function modeOfName(name: string): InputMode | null {
  const lower = name.toLowerCase();
  if (lower.endsWith(".csv")) return "csv";
  if (lower.endsWith(".tsv")) return "tsv";
  if (lower.endsWith(".jsonl") || lower.endsWith(".ndjson")) return "jsonl";
  if (lower.endsWith(".txt")) return "text";
  return null;
}

/** One input line: its text, or the bytes of a line too long to read. */
export type InputLine = string | { tooLong: number };

/**
 * The lines of a byte stream, decoded as UTF-8 (a final line without a
 * newline included), yielded per chunk read. A line longer than `maxBytes`
 * (newline excluded) is not kept: its bytes are counted and dropped as they
 * come, and it is yielded as `{ tooLong }`. Each byte is looked at once, so
 * the time is linear in the input and the memory bounded by `maxBytes` and
 * the chunk size, however long a line is.
 *
 * @example
 * ```ts
 * import { linesOf } from "./predict_input.ts";
 * import assert from "node:assert/strict";
 * const input = ReadableStream.from([new TextEncoder().encode("ab\r\ntoo long\nc")]);
 * const out = [];
 * for await (const lines of linesOf(input, 4)) out.push(...lines);
 * assert.deepEqual(out, ["ab", { tooLong: 8 }, "c"]);
 * ```
 */
export async function* linesOf(
  stream: ReadableStream<Uint8Array>,
  maxBytes: number = MAX_LINE_BYTES,
): AsyncGenerator<InputLine[]> {
  const decoder = new TextDecoder();
  let parts: Uint8Array[] = [];
  let held = 0;
  let skipped = -1; // bytes of the line being dropped; -1 while it is kept
  const keep = (bytes: Uint8Array) => {
    if (skipped >= 0) skipped += bytes.length;
    else if (held + bytes.length > maxBytes) {
      skipped = held + bytes.length;
      parts = [];
      held = 0;
    } else if (bytes.length > 0) {
      // A copy: the stream may reuse its chunk.
      parts.push(bytes.slice());
      held += bytes.length;
    }
  };
  const trim = (line: string) => line.endsWith("\r") ? line.slice(0, -1) : line;
  const finish = (): InputLine => {
    if (skipped >= 0) {
      const line = { tooLong: skipped };
      skipped = -1;
      return line;
    }
    const bytes = parts.length === 1 ? parts[0]! : concat(parts, held);
    parts = [];
    held = 0;
    return trim(decoder.decode(bytes));
  };
  for await (const chunk of stream) {
    const out: InputLine[] = [];
    let start = 0;
    let nl = chunk.indexOf(0x0a);
    // The end of a line begun in an earlier chunk.
    if (nl >= 0 && (held > 0 || skipped >= 0)) {
      keep(chunk.subarray(0, nl));
      out.push(finish());
      start = nl + 1;
      nl = chunk.indexOf(0x0a, start);
    }
    const last = chunk.lastIndexOf(0x0a);
    if (nl >= 0) {
      // Whole lines: when none is too long, decoded in one call and split
      // (a newline byte is a newline character in UTF-8).
      let fits = true;
      for (
        let at = start, i = nl;
        i >= 0;
        at = i + 1, i = chunk.indexOf(0x0a, at)
      ) {
        if (i - at > maxBytes) {
          fits = false;
          break;
        }
      }
      if (fits) {
        for (
          const line of decoder.decode(chunk.subarray(start, last)).split("\n")
        ) {
          out.push(trim(line));
        }
      } else {
        for (
          let i = nl;
          i >= 0;
          start = i + 1, i = chunk.indexOf(0x0a, start)
        ) {
          keep(chunk.subarray(start, i));
          out.push(finish());
        }
      }
      start = last + 1;
    }
    keep(chunk.subarray(start));
    yield out;
  }
  if (held > 0 || skipped >= 0) yield [finish()];
}

function concat(parts: readonly Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * The first line of `stream` (up to `maxBytes`; empty lines before it
 * skipped) and the stream whole again, the bytes read put back in front.
 */
export async function peekFirstLine(
  stream: ReadableStream<Uint8Array>,
  maxBytes = 65_536,
): Promise<{ line: string; stream: ReadableStream<Uint8Array> }> {
  const reader = stream.getReader();
  const read: Uint8Array[] = [];
  let bytes = 0;
  let line = "";
  let done = false;
  while (bytes < maxBytes) {
    const r = await reader.read();
    if (r.done) {
      done = true;
      break;
    }
    read.push(r.value);
    bytes += r.value.length;
    const text = new TextDecoder().decode(concat(read, bytes));
    const first = text.split("\n").find((l) => l.trim() !== "");
    if (
      first !== undefined && text.indexOf(first) + first.length < text.length
    ) {
      line = first;
      break;
    }
  }
  if (line === "" && read.length > 0) {
    line = new TextDecoder().decode(concat(read, bytes)).split("\n").find((
      l,
    ) => l.trim() !== "") ?? "";
  }
  const rest = async function* () {
    for (const chunk of read) yield chunk;
    if (done) return;
    for (;;) {
      const r = await reader.read();
      if (r.done) return;
      yield r.value;
    }
  };
  return {
    line: line.endsWith("\r") ? line.slice(0, -1) : line,
    stream: ReadableStream.from(rest()),
  };
}

/**
 * The records of CSV or TSV input, each read as a text from the column
 * named `column` (any case; an `id` column, when there is one, is echoed),
 * yielded in groups as csv-parse reads them. A header without the column
 * is an error naming the columns it has; a record the parser refuses ends
 * the input with an error record.
 */
export async function* csvRecordsOf(
  stream: ReadableStream<Uint8Array>,
  delimiter: "," | "\t",
  column: string,
): AsyncGenerator<ReadLine[]> {
  let header: string[] | null = null;
  let textAt = -1;
  let idAt = -1;
  let pending: ReadLine[] = [];
  const parsed = stream
    .pipeThrough(
      new TransformStream<Uint8Array, Buffer>({
        transform(chunk, c) {
          c.enqueue(
            Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength),
          );
        },
      }),
    )
    .pipeThrough(csvStream({
      delimiter,
      bom: true,
      skip_empty_lines: true,
      relax_column_count: true,
      relax_quotes: delimiter === "\t",
      max_record_size: MAX_LINE_BYTES,
      info: true,
    }))
    .getReader();
  try {
    for (;;) {
      const r = await parsed.read();
      if (r.done) break;
      const { record, info } = r.value as unknown as {
        record: string[];
        info: { lines: number };
      };
      if (header === null) {
        header = record.map((c) => c.trim());
        textAt = header.findIndex((c) =>
          c.toLowerCase() === column.toLowerCase()
        );
        idAt = header.findIndex((c) => c.toLowerCase() === "id");
        if (textAt < 0) {
          throw new RangeError(
            `the ${
              delimiter === "," ? "CSV" : "TSV"
            } header has no column "${column}" (its columns: ${
              header.map((c) => JSON.stringify(c)).join(", ")
            }); name the text column with --text-column`,
          );
        }
        continue;
      }
      const id = idAt >= 0 && record[idAt] !== undefined
        ? { id: record[idAt] }
        : {};
      const text = record[textAt];
      pending.push(
        text === undefined
          ? {
            error: `line ${info.lines}: has no "${
              header[textAt]
            }" cell (${record.length} cells)`,
            ...id,
          }
          : { text, ...id },
      );
      if (pending.length >= 256) {
        yield pending;
        pending = [];
      }
    }
  } catch (e) {
    if (e instanceof RangeError) throw e;
    await parsed.cancel().catch(() => {});
    pending.push({ error: `not read on: ${(e as Error).message}` });
  }
  if (pending.length > 0) yield pending;
}
