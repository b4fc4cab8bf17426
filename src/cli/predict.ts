/**
 * `predict`: texts from files or standard input, answers on standard
 * output, one JSON line each, written by the HTTP layer's own `/v1/decide`
 * answer writer so a line reads exactly as the `answers` of a `/v1/decide`
 * reply; with a bundle's second tier, the texts the table withholds for
 * low confidence are embedded (a group at a time) and answered by the
 * two-tier rule, as `serve` answers them.
 *
 * @module
 */

import { loadBundle } from "../bundle/mod.ts";
import {
  type AnsweringTier,
  type Assessment,
  closestName,
  type SecondTierAsk,
} from "../engine/mod.ts";
import type { EncoderPool } from "../encoder/mod.ts";
import {
  type Ask,
  assessRequest,
  JsonWriter,
  type ServiceTable,
  serviceTable,
  writeDecideAnswer,
  writeQuestionKey,
} from "../wire/mod.ts";
import { parseFlags, UsageError, userPath } from "./common.ts";
import {
  csvHeaderOf,
  csvRecordsOf,
  INPUT_MODES,
  type InputMode,
  linesOf,
  looksLikeJsonLine,
  MAX_LINE_BYTES,
  modeOfName,
  peekFirstLine,
  readJsonLine,
  type ReadLine,
} from "./predict_input.ts";

/** Usage text of `predict`. */
export const PREDICT_USAGE =
  `Usage: predict --bundle DIR [FILE ...] [--question Q ...] [--exposed] [--top K]
               [--input auto|text|jsonl|csv|tsv] [--text-column NAME] [--table-only]

Reads texts from the FILEs named, one after the other (none, or -: standard
input), and writes one JSON line of answers for each on standard output, as the
"answers" of POST /v1/decide:
  {"answers": {"topic": {"choice": "billing", "confidence": 0.97, "certified": true, ...}}}
Plain text: one text a line. JSON Lines: each text as "text" (or "state"; a JSON
object is read as /v1/decide reads a state object); an "id" is echoed first.
CSV or TSV with a header: the texts from the column --text-column names (an
"id" column is echoed), one output line per record.
Answers are certified as serve certifies them: the online drift guard included
(it starts quiet), and with a bundle that has a second tier, both tiers (the
texts the table withholds for low confidence are embedded, a group at a time,
and answered by the two-tier rule; each answer then says its "tier"). A JSON
line that cannot be read, and any line over 1 MiB (not read: the most serve
takes as a body), gets {"error": "line N: ..."} on its line of output, so output
lines match input lines; the exit code is then 2.

Options:
  --bundle DIR        bundle folder (required)
  --question Q        answer only question Q; repeat for several (default: all)
  --exposed           the texts may be adversarial: also require the radius minimum
  --top K             print only the K most probable options of a choice answer, the
                      answer first (as "top" in a /v1/decide body); default: all
  --input MODE        text: every line is a text; jsonl: every non-empty line is a
                      JSON object; csv, tsv: a header, then records; auto (default):
                      by a FILE's name (.csv, .tsv, .jsonl, .txt), else jsonl when the
                      first non-empty line is a JSON object with "text" or "state",
                      csv or tsv when it is a header of names naming the text column
                      (text,label), else text
  --text-column NAME  CSV and TSV: the column holding the texts (default text)
  --table-only        with a bundle that has a second tier, answer with the table
                      alone, at its own threshold (no encoder is loaded)
  --help              this text`;

const PREDICT_FLAGS = {
  bundle: { type: "string" },
  question: { type: "string", multiple: true },
  exposed: { type: "boolean", default: false },
  top: { type: "string" },
  input: { type: "string", default: "auto" },
  "text-column": { type: "string", default: "text" },
  "table-only": { type: "boolean", default: false },
  help: { type: "boolean", default: false },
} as const;

/** One text answered by the table, waiting (perhaps) for the second tier. */
interface Answered {
  read: ReadLine;
  answers: Assessment[];
  ask: SecondTierAsk | null;
  tiers: AnsweringTier[] | undefined;
}

/**
 * Answers one text (or carries its error) by the table, feeding the drift
 * guard, with what it asks of the second tier (taken before the next text
 * is prepared).
 */
function answerByTable(
  served: ServiceTable,
  read: ReadLine,
  asks: readonly Ask[] | null,
  exposed: boolean,
  top: number | null,
): Answered {
  if ("error" in read) {
    return { read, answers: [], ask: null, tiers: undefined };
  }
  const { answerer } = served;
  const prepared = answerer.prepare(read.text);
  const answers = assessRequest(
    answerer.table,
    answerer.state,
    prepared,
    { text: read.text, asks, exposed, model: null, top },
    answerer.monitor,
  );
  const ask = answerer.secondTierAsk(answers, prepared, exposed);
  return {
    read,
    answers,
    ask,
    tiers: answerer.tiered ? answers.map(() => "table" as const) : undefined,
  };
}

/**
 * Writes the answers of one text as one JSON line into `w` (`tiers`, with
 * a second tier served, says which tier gave each); with `top`, choice
 * answers print only their `top` most probable options.
 */
export function writePrediction(
  w: JsonWriter,
  served: ServiceTable,
  read: ReadLine,
  answers: readonly Assessment[],
  top: number | null = null,
  tiers?: readonly AnsweringTier[],
): void {
  if ("error" in read) {
    w.ascii("{");
    if (read.id !== undefined) {
      w.ascii('"id":').text(JSON.stringify(read.id) ?? "null").ascii(",");
    }
    w.ascii('"error":').string(read.error).ascii("}\n");
    return;
  }
  w.ascii("{");
  if (read.id !== undefined) {
    w.ascii('"id":').text(JSON.stringify(read.id) ?? "null").ascii(",");
  }
  w.ascii('"answers":{');
  answers.forEach((a, i) => {
    if (i > 0) w.ascii(",");
    writeQuestionKey(w, served, a);
    writeDecideAnswer(w, served, a, undefined, top, tiers?.[i]);
  });
  w.ascii("}}\n");
}

/** The second tier's encoder for `predict`, loaded when a text first asks it. */
class LazyEncoder {
  #pool: EncoderPool | null = null;

  /** The texts' embeddings (in batches on two workers). */
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (this.#pool === null) {
      console.error(
        "note: the bundle has a second tier: loading the sentence encoder for the texts the table is not sure of (--table-only answers with the table alone)",
      );
      const { EncoderPool, readThisEncoder } = await import(
        "../encoder/mod.ts"
      );
      this.#pool = await EncoderPool.start(await readThisEncoder(), {
        workers: Math.max(1, Math.min(2, navigator.hardwareConcurrency)),
      });
    }
    return await this.#pool.embedAll(texts);
  }

  close(): void {
    this.#pool?.close();
  }
}

/**
 * Gives the asked answers of `group` by the two-tier rule: their texts
 * embedded as one list (each text once), each answer certified against
 * its bundle's two-tier threshold, as `serve` starts.
 */
async function answerBySecondTier(
  served: ServiceTable,
  group: readonly Answered[],
  encoder: LazyEncoder,
): Promise<void> {
  const waiting = group.filter((d) => d.ask !== null);
  if (waiting.length === 0) return;
  const texts = [
    ...new Set(waiting.map((d) => (d.read as { text: string }).text)),
  ];
  const vectors = await encoder.embed(texts);
  const at = new Map(texts.map((t, i) => [t, i]));
  for (const d of waiting) {
    const text = (d.read as { text: string }).text;
    d.tiers = served.answerer.answerAsked(
      d.answers,
      d.ask,
      vectors[at.get(text)!] ?? null,
    ).tiers;
  }
}

async function writeAll(bytes: Uint8Array): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    done += await Deno.stdout.write(bytes.subarray(done));
  }
}

/** Opens the FILEs named (`-`: `input`), one stream after the other; a missing file fails before any is read. */
async function inputOf(
  files: readonly string[],
  input: ReadableStream<Uint8Array>,
): Promise<ReadableStream<Uint8Array>> {
  if (files.length === 0) return input;
  const opened: ReadableStream<Uint8Array>[] = [];
  for (const f of files) {
    if (f === "-") opened.push(input);
    else {
      try {
        opened.push((await Deno.open(userPath(f)!)).readable);
      } catch (e) {
        for (const o of opened) if (o !== input) await o.cancel();
        throw new UsageError(
          `cannot read ${f}: ${(e as Error).message.split("\n")[0]}`,
        );
      }
    }
  }
  if (opened.length === 1) return opened[0]!;
  return ReadableStream.from((async function* () {
    for (const o of opened) yield* o;
  })());
}

/** Runs `predict`; returns the exit code (2 when a line could not be read). */
export async function predictCommand(
  args: string[],
  input: ReadableStream<Uint8Array> = Deno.stdin.readable,
): Promise<number> {
  const { values, positionals } = parseFlags(
    "predict",
    args,
    PREDICT_FLAGS,
    true,
  );
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
  const column = values["text-column"];
  if (column.trim() === "") {
    throw new UsageError(`--text-column needs a column name: got ""`);
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
  const served = serviceTable(
    table,
    undefined,
    undefined,
    null,
    !values["table-only"],
  );
  let mode = values.input as InputMode;
  if (mode === "auto" && positionals.length > 0) {
    const named = positionals.map((f) => modeOfName(f));
    if (named.every((m) => m !== null && m === named[0])) mode = named[0]!;
  }
  let stream = await inputOf(positionals, input);
  if (mode === "auto") {
    const peeked = await peekFirstLine(stream);
    stream = peeked.stream;
    const line = peeked.line;
    const header = csvHeaderOf(line, column);
    mode = line.trim() === ""
      ? "text"
      : looksLikeJsonLine(line)
      ? "jsonl"
      : header ?? "text";
    if (header !== null && mode === header) {
      console.error(
        `note: reading ${header.toUpperCase()} (its header: ${line.trim()}): the texts of column "${column}", one answer a record (--input text reads every line as a text)`,
      );
    }
  }
  const encoder = new LazyEncoder();
  const w = new JsonWriter();
  let unreadable = 0;
  const answerGroup = async (reads: readonly ReadLine[]) => {
    const group = reads.map((read) =>
      answerByTable(served, read, asks, values.exposed, top)
    );
    await answerBySecondTier(served, group, encoder);
    w.reset();
    for (const d of group) {
      if ("error" in d.read) {
        unreadable++;
        console.error(`error: ${d.read.error}`);
      }
      writePrediction(w, served, d.read, d.answers, top, d.tiers);
    }
    await writeAll(w.view());
  };
  try {
    if (mode === "csv" || mode === "tsv") {
      try {
        for await (
          const reads of csvRecordsOf(
            stream,
            mode === "csv" ? "," : "\t",
            column,
          )
        ) {
          await answerGroup(reads);
        }
      } catch (e) {
        if (e instanceof RangeError) throw new UsageError(e.message);
        throw e;
      }
      return unreadable > 0 ? 2 : 0;
    }
    let at = 0;
    // With --input auto, blank lines before the first text are skipped, as
    // they said nothing of the format.
    let leading = values.input === "auto";
    for await (const lines of linesOf(stream)) {
      const reads: ReadLine[] = [];
      for (const line of lines) {
        at++;
        if (typeof line !== "string") {
          reads.push({
            error: `line ${at}: ${
              line.tooLong.toLocaleString("en-US")
            } bytes, longer than the ${
              MAX_LINE_BYTES.toLocaleString("en-US")
            } bytes (1 MiB) one line may hold (as serve refuses a larger body); not read`,
          });
          continue;
        }
        if (leading && line.trim() === "") continue;
        leading = false;
        if (mode === "jsonl" && line.trim() === "") continue;
        reads.push(mode === "jsonl" ? readJsonLine(line, at) : { text: line });
      }
      await answerGroup(reads);
    }
    return unreadable > 0 ? 2 : 0;
  } finally {
    encoder.close();
  }
}
