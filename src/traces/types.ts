/**
 * What reading traces produces and what it can be told.
 *
 * @module
 */

import type { QuestionKind } from "../engine/table.ts";

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
