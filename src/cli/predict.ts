/**
 * `predict`: texts on standard input, answers on standard output, one JSON
 * line each, written by the HTTP layer's own `/v1/decide` answer writer so a
 * line reads exactly as the `answers` of a `/v1/decide` reply.
 *
 * @module
 */

import { loadBundle } from "../bundle/files.ts";
import { prepareText, stateText } from "../engine/mod.ts";
import { writeDecideAnswer } from "../http/decide.ts";
import { type Ask, assessRequest } from "../http/decision_request.ts";
import { JsonWriter } from "../http/json_writer.ts";
import { writeQuestionKey } from "../http/reply_parts.ts";
import { type ServedTable, serveTable } from "../http/served.ts";
import { parseFlags, UsageError, userPath } from "./common.ts";
import { closestName } from "../engine/suggest.ts";

/** Usage text of `predict`. */
export const PREDICT_USAGE =
  `Usage: predict --bundle DIR [--question Q ...] [--exposed] [--top K] [--input auto|text|jsonl]

Reads texts from standard input, one a line, and writes one JSON line of answers
for each on standard output, as the "answers" of POST /v1/decide:
  {"answers": {"topic": {"choice": "billing", "confidence": 0.97, "certified": true, ...}}}
JSON Lines input gives each text as "text" (or "state"; a JSON object is read as
/v1/decide reads a state object); an "id" is echoed first.
Answers are certified as a server would certify them, the online drift guard
included (it starts quiet). A JSON line that cannot be read gets {"error": ...}
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
type InputMode = (typeof INPUT_MODES)[number];

/** One input line, read: the text and its id, or why it cannot be answered. */
type ReadLine = { text: string; id?: unknown } | { error: string };

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
  const field = "text" in o ? "text" : "state";
  const given = o[field];
  // As /v1/decide reads a state: a string, or an object read as its JSON.
  const isObject = typeof given === "object" && given !== null &&
    !Array.isArray(given);
  if (typeof given !== "string" && !isObject) {
    return {
      error: `line ${at}: "${field}" must be a string or a JSON object: got ${
        given === undefined ? "none" : JSON.stringify(given)?.slice(0, 40)
      }`,
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
    w.ascii('{"error":').string(read.error).ascii("}\n");
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

/** The lines of a byte stream, decoded as UTF-8 (a final line without a newline included). */
async function* linesOf(
  stream: ReadableStream<Uint8Array>,
): AsyncGenerator<string[]> {
  let rest = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    const parts = (rest + chunk).split("\n");
    rest = parts.pop()!;
    yield parts.map((l) => l.endsWith("\r") ? l.slice(0, -1) : l);
  }
  if (rest !== "") yield [rest.endsWith("\r") ? rest.slice(0, -1) : rest];
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
