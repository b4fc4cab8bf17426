/**
 * Reading traces: JSON Lines, CSV, TSV or a JSON array, from files (`.gz`
 * too) or standard input, into one `TraceSet` of texts, per-question answers,
 * and the time and group of each trace; and writing one trace as JSON Lines.
 *
 * - `readTraces(sources, options)` streams any number of sources;
 * - `parseTraceText(name, content, options)` parses one file's text at once;
 * - `traceLine(trace)` writes one trace as a JSON Lines line that reading
 *   takes back.
 *
 * @module
 */

export { typeAnswers, YES_NO_OPTIONS } from "./answers.ts";
export { TraceSetBuilder } from "./builder.ts";
export { formatByName, STDIN, type TraceFormat } from "./format.ts";
export { parseIsoTime } from "./provenance.ts";
export { parseCsvTraces, parseJsonlTraces, parseTraceText } from "./parse.ts";
export { readTraces } from "./read.ts";
export { traceLine, type TraceRecord } from "./write.ts";
export {
  type LedgerEntry,
  ledgerKey,
  ledgerLine,
  parseLedger,
  parsePick,
  type PickLine,
  pickLine,
} from "./ledger.ts";
export { FEEDBACK_SOURCES } from "./types.ts";
export type {
  FeedbackOrigins,
  FeedbackSourceName,
  HeapUse,
  PickedDecision,
  QuestionAnswers,
  ReadProgress,
  TraceFields,
  TraceParseOptions,
  TraceReadOptions,
  TraceSet,
} from "./types.ts";

// What the program's other folders use besides reading traces.
export { MAX_EPOCH_SECONDS } from "./provenance.ts";
