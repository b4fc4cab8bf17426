/**
 * `predict`: texts on standard input, answers on standard output, one JSON
 * line each, written by the HTTP layer's own `/v1/decide` answer writer so a
 * line reads exactly as the `answers` of a `/v1/decide` reply.
 *
 * @module
 */

import { loadBundle } from "../bundle/mod.ts";
import { closestName, prepareText, stateText } from "../engine/mod.ts";
import { MAX_BODY_BYTES } from "../http/body.ts";
import { writeDecideAnswer } from "../http/decide.ts";
import { type Ask, assessRequest } from "../http/decision_request.ts";
import { JsonWriter } from "../http/json_writer.ts";
import { writeQuestionKey } from "../http/reply_parts.ts";
import { type ServedTable, serveTable } from "../http/served.ts";
import { parseFlags, UsageError, userPath } from "./common.ts";

/** Usage text of `predict`. */
export const PREDICT_USAGE =
  `Usage: predict --bundle DIR [--question Q ...] [--exposed] [--top K] [--input auto|text|jsonl]

Reads texts from standard input, one a line, and writes one JSON line of answers
for each on standard output, as the "answers" of POST /v1/decide:
  {"answers": {"topic": {"choice": "billing", "confidence": 0.97, "certified": true, ...}}}
JSON Lines input gives each text as "text" (or "state"; a JSON object is read as
/v1/decide reads a state object); an "id" is echoed first.
Answers are certified as a server would certify them, the online drift guard
included (it starts quiet). A JSON line that cannot be read, and any line over
1 MiB (not read: the most serve takes as a body), gets {"error": "line N: ..."}
on its line of output, so output lines match input lines; the exit code is then 2.

Options:
  --bundle DIR        bundle folder (required)
  --question Q        answer only question Q; repeat for several (default: all)
  --exposed           the texts may be adversarial: also require the radius minimum
  --top K             print only the K most probable options of a choice answer, the
                      answer first (as "top" in a /v1/decide body); default: all
  --input MODE        text: every line is a text; jsonl: every non-empty line is a
                      JSON object; auto (default): jsonl when the first non-empty
                      line is a JSON object with "text" or "state", else text
  --help              this text`;

const PREDICT_FLAGS = {
  bundle: { type: "string" },
  question: { type: "string", multiple: true },
  exposed: { type: "boolean", default: false },
  top: { type: "string" },
  input: { type: "string", default: "auto" },
  help: { type: "boolean", default: false },
} as const;

const INPUT_MODES = ["auto", "text", "jsonl"] as const;

/**
 * Most bytes of one input line (its newline excluded): 1 MiB, what `serve`
 * takes as a request body. A longer line gets an error on its output line
 * and is not read.
 */
export const MAX_LINE_BYTES = MAX_BODY_BYTES;
type InputMode = (typeof INPUT_MODES)[number];

/** One input line, read: the text and its id, or why it cannot be answered (and its id, when it has one). */
type ReadLine = { text: string; id?: unknown } | {
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
function looksLikeJsonLine(line: string): boolean {
  if (!line.trimStart().startsWith("{")) return false;
  const read = readJsonLine(line, 0);
  return !("error" in read);
}

/**
 * Writes the answers of one text as one JSON line into `w`; with `top`,
 * choice answers print only their `top` most probable options.
 */
export function writePrediction(
  w: JsonWriter,
  served: ServedTable,
  read: ReadLine,
  asks: readonly Ask[] | null,
  exposed: boolean,
  top: number | null = null,
): void {
  if ("error" in read) {
    w.ascii("{");
    if (read.id !== undefined) {
      w.ascii('"id":').text(JSON.stringify(read.id) ?? "null").ascii(",");
    }
    w.ascii('"error":').string(read.error).ascii("}\n");
    return;
  }
  const { table, state, monitor } = served;
  const answers = assessRequest(
    table,
    state,
    prepareText(table, state, read.text),
    { text: read.text, asks, exposed, model: null, top },
    monitor,
  );
  w.ascii("{");
  if (read.id !== undefined) {
    w.ascii('"id":').text(JSON.stringify(read.id) ?? "null").ascii(",");
  }
  w.ascii('"answers":{');
  answers.forEach((a, i) => {
    if (i > 0) w.ascii(",");
    writeQuestionKey(w, served, a);
    writeDecideAnswer(w, served, a, undefined, top);
  });
  w.ascii("}}\n");
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
 * import { linesOf } from "./predict.ts";
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

async function writeAll(bytes: Uint8Array): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    done += await Deno.stdout.write(bytes.subarray(done));
  }
}

/** Runs `predict`; returns the exit code (2 when a line could not be read). */
export async function predictCommand(
  args: string[],
  input: ReadableStream<Uint8Array> = Deno.stdin.readable,
): Promise<number> {
  const { values } = parseFlags("predict", args, PREDICT_FLAGS);
  if (values.help) {
    console.log(PREDICT_USAGE);
    return 0;
  }
  if (values.bundle === undefined) {
    throw new UsageError("predict needs --bundle DIR (see predict --help)");
  }
  if (!INPUT_MODES.includes(values.input as InputMode)) {
    throw new UsageError(
      `--input must be one of ${INPUT_MODES.join(", ")}: got "${values.input}"`,
    );
  }
  const top = values.top === undefined ? null : Number(values.top);
  if (top !== null && (!Number.isInteger(top) || top < 1)) {
    throw new UsageError(
      `--top must be a whole number, 1 or more: got "${values.top}"`,
    );
  }
  const table = await loadBundle(userPath(values.bundle));
  const names = table.questions.map((q) => q.name);
  for (const q of values.question ?? []) {
    if (!table.byName.has(q)) {
      const close = closestName(q, names);
      throw new UsageError(
        `--question "${q}" is not a question of the bundle${
          close === null ? "" : ` (did you mean "${close}"?)`
        }; its questions: ${names.join(", ")}`,
      );
    }
  }
  const asks: Ask[] | null = values.question === undefined
    ? null
    : values.question.map((name) => ({
      name,
      options: undefined,
      type: undefined,
    }));
  const served = serveTable(table);
  let mode = values.input as InputMode;
  const w = new JsonWriter();
  let at = 0;
  let unreadable = 0;
  for await (const lines of linesOf(input)) {
    w.reset();
    for (const line of lines) {
      at++;
      if (typeof line !== "string") {
        unreadable++;
        const read = {
          error: `line ${at}: ${
            line.tooLong.toLocaleString("en-US")
          } bytes, longer than the ${
            MAX_LINE_BYTES.toLocaleString("en-US")
          } bytes (1 MiB) one line may hold (as serve refuses a larger body); not read`,
        };
        console.error(`error: ${read.error}`);
        writePrediction(w, served, read, asks, values.exposed);
        continue;
      }
      if (mode === "auto") {
        // Blank lines before the first text say nothing of the format.
        if (line.trim() === "") continue;
        mode = looksLikeJsonLine(line) ? "jsonl" : "text";
      }
      if (mode === "jsonl" && line.trim() === "") continue;
      const read: ReadLine = mode === "jsonl"
        ? readJsonLine(line, at)
        : { text: line };
      if ("error" in read) {
        unreadable++;
        console.error(`error: ${read.error}`);
      }
      writePrediction(w, served, read, asks, values.exposed, top);
    }
    await writeAll(w.view());
  }
  return unreadable > 0 ? 2 : 0;
}
