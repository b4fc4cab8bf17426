/**
 * Parsing one file's text at once, for tests and small callers. It runs the
 * same per-line and per-record code as streaming (`read.ts`).
 *
 * @module
 */

import { parse as parseCsv } from "csv-parse/sync";
import { TraceSetBuilder } from "./builder.ts";
import { csvError, csvParseOptions, CsvTraceReader } from "./csv.ts";
import {
  formatByName,
  sniffFormat,
  STDIN,
  type TraceFormat,
} from "./format.ts";
import { JsonArrayReader } from "./json_array.ts";
import { jsonFields } from "./json_trace.ts";
import { JsonLinesReader } from "./jsonl.ts";
import type { TraceParseOptions, TraceSet } from "./types.ts";

/**
 * Parses one file's text: CSV or TSV when its name ends in `.csv` / `.tsv`
 * (a `.gz` after it is ignored: the text is already decompressed), a JSON
 * array when the text starts with `[`, JSON Lines otherwise. `name` prefixes
 * every error (`name:line: reason`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseTraceText } from "./parse.ts";
 * const set = parseTraceText(
 *   "t.jsonl",
 *   '{"text": "my card is lost", "answers": {"intent": "lost_card"}}\n',
 * );
 * assert.deepEqual(set.questions[0]?.options, ["lost_card"]);
 * ```
 */
export function parseTraceText(
  name: string,
  content: string,
  options: TraceParseOptions = {},
): TraceSet {
  const format = formatByName(name) ??
    sniffFormat(content.slice(0, 65536), name !== STDIN);
  return parseAs(format, name, content, options);
}

/** Parses JSON Lines text (see `parseTraceText`). */
export function parseJsonlTraces(
  name: string,
  content: string,
  options: TraceParseOptions = {},
): TraceSet {
  return parseAs("jsonl", name, content, options);
}

/** Parses CSV text (see `parseTraceText`). */
export function parseCsvTraces(
  name: string,
  content: string,
  options: TraceParseOptions = {},
): TraceSet {
  return parseAs("csv", name, content, options);
}

function parseAs(
  format: TraceFormat,
  name: string,
  content: string,
  options: TraceParseOptions,
): TraceSet {
  const builder = new TraceSetBuilder(options.warn);
  builder.beginFile(name);
  const text = content.startsWith("\ufeff") ? content.slice(1) : content;
  if (format === "csv" || format === "tsv") {
    const reader = new CsvTraceReader(name, builder, options);
    try {
      parseCsv(text, csvParseOptions(format === "csv" ? "," : "\t", reader));
    } catch (e) {
      throw csvError(name, e);
    }
    reader.end();
  } else {
    const reader = format === "json"
      ? new JsonArrayReader(name, builder, jsonFields(options))
      : new JsonLinesReader(name, builder, jsonFields(options), options.warn);
    reader.push(text);
    reader.end();
  }
  builder.endFile();
  return checkAnswerColumns(builder.finish(), name, options);
}

/** `set`, when every named answer column is answered by some trace. */
export function checkAnswerColumns(
  set: TraceSet,
  what: string,
  options: TraceParseOptions,
): TraceSet {
  for (const name of options.answerColumns ?? []) {
    if (!set.questions.some((q) => q.name === name)) {
      throw new RangeError(
        `${what}: no trace answers "${name}", named as an answer column`,
      );
    }
  }
  return set;
}
