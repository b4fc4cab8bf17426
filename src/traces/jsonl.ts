/**
 * JSON Lines traces: one JSON trace object per line; blank lines are skipped.
 * A last line without a newline that is not valid JSON is what a crash
 * mid-append leaves (a torn line): with a `warn` callback it is skipped and
 * reported with its file and line; anywhere else, a line that is not JSON
 * is an error.
 *
 * @module
 */

import type { TraceSetBuilder } from "./builder.ts";
import { addJsonTrace, fail, type JsonFields } from "./json_trace.ts";
import { LineSplitter, MAX_TRACE_LINE_CHARS, tooLongReason } from "./_lines.ts";

/** Reads JSON Lines text, pushed in chunks, into a builder. */
export class JsonLinesReader {
  readonly #file: string;
  readonly #fields: JsonFields;
  readonly #builder: TraceSetBuilder;
  readonly #splitter = new LineSplitter(
    MAX_TRACE_LINE_CHARS,
    (line) =>
      fail(
        `${this.#file}:${line}`,
        tooLongReason("line", MAX_TRACE_LINE_CHARS),
      ),
  );
  readonly #warn: ((line: string) => void) | undefined;
  readonly #line = (line: string, number: number) => this.#add(line, number);

  /**
   * Reads `file`'s lines into `builder`; `warn`, when given, is told about
   * a torn last line, which is then skipped (see the module doc).
   */
  constructor(
    file: string,
    builder: TraceSetBuilder,
    fields: JsonFields,
    warn?: (line: string) => void,
  ) {
    this.#file = file;
    this.#builder = builder;
    this.#fields = fields;
    this.#warn = warn;
  }

  /** Lines read so far. */
  get lines(): number {
    return this.#splitter.lines;
  }

  /** Reads the lines `chunk` completes. */
  push(chunk: string): void {
    this.#splitter.push(chunk, this.#line);
  }

  /** Reads the last line (one without a newline may be torn: see the module doc). */
  end(): void {
    this.#splitter.end((line, number) => this.#add(line, number, true));
  }

  #add(line: string, number: number, unterminated = false): void {
    const where = `${this.#file}:${number}`;
    const trimmed = line.trim();
    if (trimmed === "") return;
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch (e) {
      if (unterminated && this.#warn !== undefined) {
        this.#warn(
          `${where}: the last line is torn (${line.length} characters, no newline, not valid JSON), as a crash while appending leaves it; skipped`,
        );
        return;
      }
      fail(where, `not valid JSON (${(e as Error).message})`);
    }
    addJsonTrace(value, this.#fields, this.#builder, where);
  }
}
