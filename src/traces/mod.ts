/**
 * Reading traces: JSON Lines, CSV, TSV or a JSON array, from files (`.gz`
 * too) or standard input, into one `TraceSet` of texts, per-question answers,
 * and the time and group of each trace.
 *
 * - `readTraces(sources, options)` streams any number of sources;
 * - `parseTraceText(name, content, options)` parses one file's text at once.
 *
 * @module
 */

export { typeAnswers, YES_NO_OPTIONS } from "./answers.ts";
export { TraceSetBuilder } from "./builder.ts";
export { formatByName, STDIN, type TraceFormat } from "./format.ts";
export { parseIsoTime } from "./provenance.ts";
export { parseCsvTraces, parseJsonlTraces, parseTraceText } from "./parse.ts";
export { readTraces } from "./read.ts";
export type {
  HeapUse,
  QuestionAnswers,
  ReadProgress,
  TraceFields,
  TraceParseOptions,
  TraceReadOptions,
  TraceSet,
} from "./types.ts";
