/**
 * What reading traces produces and what it can be told.
 *
 * @module
 */

import type { QuestionKind } from "../engine/mod.ts";
import type { LedgerEntry } from "./ledger.ts";

/**
 * Where a feedback log's line came from (its `feedback.source`): `trace`
 * (what a client chose to send, or an item without a usable id),
 * `uncertified` (an answer the service left uncertified and did not pick),
 * `sample` (an uncertified answer picked by the calibration coin) or
 * `audit` (a certified answer picked by it). `other` is any other word;
 * `none` marks a trace that is no feedback line.
 */
export const FEEDBACK_SOURCES = [
  "none",
  "other",
  "trace",
  "uncertified",
  "sample",
  "audit",
] as const;

/** One of `FEEDBACK_SOURCES`. */
export type FeedbackSourceName = typeof FEEDBACK_SOURCES[number];

/**
 * Per trace, what a feedback log says about how its decision was picked;
 * for a trace that is not a feedback line, `source` is 0 (`none`) and the
 * rest NaN or -1.
 */
export interface FeedbackOrigins {
  /** Index into `FEEDBACK_SOURCES` (0: no feedback line). */
  source: Uint8Array;
  /** Probability with which the decision was picked (`sampling_probability`); NaN when not said. */
  rate: Float64Array;
  /** When the decision was made, ms since the epoch; NaN when not said. */
  decidedAt: Float64Array;
  /** Index into `issuers` of the process that made the decision; -1 when not said. */
  issuer: Int32Array;
  /** Index into `bundles` of the bundle that answered; -1 when not said. */
  bundle: Int32Array;
  issuers: string[];
  bundles: string[];
  /** Per feedback line that names its decision (`audit` or `id`), that name, by row. */
  ids: Map<number, string>;
}

/** One question's answers across the traces. */
export interface QuestionAnswers {
  name: string;
  kind: QuestionKind;
  /** Options in order of first appearance; `["true", "false"]` for yes/no. */
  options: string[];
  /** Per trace, the index of the answer in `options`, or -1 when not answered. */
  labels: Int32Array;
}

/** Parsed traces: what the trainer and `eval` consume. */
export interface TraceSet {
  /** One text per trace (equal texts share one interned string). */
  texts: string[];
  /** Per question, its answers (kind, options, labels per trace, -1 = not answered). */
  questions: QuestionAnswers[];
  /** Per trace, seconds since the epoch (fractional allowed); NaN where the trace has none. Null when no trace has a time. */
  times: Float64Array | null;
  /** Per trace, an index into `groupNames`; -1 where the trace has none. Null when no trace has a group. */
  groups: Int32Array | null;
  /** Distinct group names, in order of first appearance. */
  groupNames: string[];
  /**
   * Per trace, 1 where it is a line of a service's feedback log (it has a
   * `feedback` object: an audited, uncertified or client-chosen answer,
   * never a random sample of the traffic), else 0. Null or absent when no
   * trace is.
   */
  feedback?: Uint8Array | null;
  /** Per trace, how a feedback line's decision was picked; null or absent when no trace is a feedback line. */
  origins?: FeedbackOrigins | null;
  /** The decision ledger of the feedback logs read (empty or absent when none had one). */
  ledger?: LedgerEntry[];
  /**
   * The decisions a feedback log says were picked for a label, each with
   * the row holding its text (a row that answers nothing); absent when none.
   */
  picks?: PickedDecision[];
}

/** A decision picked for a label, as a feedback log's `pick` line keeps it. */
export interface PickedDecision {
  /** The row of the trace set holding its text (it answers no question). */
  row: number;
  question: string;
  /** The decision's name (as the line that answers it names it). */
  id: string;
  /** ms since the epoch. */
  decidedAt: number;
  issuer: string;
  bundle: string;
  rate: number;
}

/** Which fields or columns hold the text and the answers. */
export interface TraceFields {
  /** The CSV column or JSON field holding the text (default `text`). */
  textColumn?: string;
  /**
   * The answer columns to read. CSV: these columns only (default: every named
   * column but the text, `time` and `group`). JSON: these keys of `answers`
   * only, or, in a trace without an `answers` object, these top-level fields
   * (flat records).
   */
  answerColumns?: readonly string[];
}

/** How one file's text is parsed. */
export interface TraceParseOptions extends TraceFields {
  /** Told about something ignored on purpose (an unnamed index column). */
  note?: (line: string) => void;
  /**
   * Told about a JSON Lines file whose last line is torn (no newline and
   * not valid JSON, as a crash mid-append leaves it): the line is then
   * skipped. Without it, such a line is an error like any other.
   */
  warn?: (line: string) => void;
}

/** How far reading has got, for a progress display. */
export interface ReadProgress {
  /** The source being read. */
  source: string;
  /** Lines (JSON Lines, CSV) or array elements read so far, all sources. */
  lines: number;
  /** Bytes read so far from all sources (compressed bytes for `.gz`). */
  bytes: number;
  /** Size of all sources in bytes; null when one of them is a stream (stdin). */
  totalBytes: number | null;
  /** Traces read so far. */
  traces: number;
  /** Distinct texts among them. */
  distinctTexts: number;
}

/** The JavaScript heap: bytes in use and the most this process may use. */
export interface HeapUse {
  used: number;
  limit: number;
}

/** How sources are read: parsing options, plus progress, stdin and the heap to watch. */
export interface TraceReadOptions extends TraceParseOptions {
  /** Called now and then while reading (every 64 KiB or 1,024 lines). */
  progress?: (p: ReadProgress) => void;
  /** What `-` reads (default: the process's standard input). */
  stdin?: ReadableStream<Uint8Array>;
  /** The heap to watch (default: V8's figures, `node:v8` `getHeapStatistics()`). */
  heap?: () => HeapUse;
}
