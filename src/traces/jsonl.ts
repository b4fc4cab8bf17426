/**
 * JSON Lines traces: one JSON trace object per line; blank lines are skipped.
 *
 * @module
 */

import type { TraceSetBuilder } from "./builder.ts";
import { addJsonTrace, fail, type JsonFields } from "./json_trace.ts";
import { LineSplitter } from "./lines.ts";

/** Reads JSON Lines text, pushed in chunks, into a builder. */
export class JsonLinesReader {
  readonly #file: string;
  readonly #fields: JsonFields;
  readonly #builder: TraceSetBuilder;
  readonly #splitter = new LineSplitter();
  readonly #line = (line: string, number: number) => this.#add(line, number);

  /** Reads `file`'s lines into `builder`. */
  constructor(file: string, builder: TraceSetBuilder, fields: JsonFields) {
    this.#file = file;
    this.#builder = builder;
    this.#fields = fields;
  }

  /** Lines read so far. */
  get lines(): number {
    return this.#splitter.lines;
  }

  /** Reads the lines `chunk` completes. */
  push(chunk: string): void {
    this.#splitter.push(chunk, this.#line);
  }

  /** Reads the last line. */
  end(): void {
    this.#splitter.end(this.#line);
  }

  #add(line: string, number: number): void {
    const where = `${this.#file}:${number}`;
    const trimmed = line.trim();
    if (trimmed === "") return;
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch (e) {
      fail(where, `not valid JSON (${(e as Error).message})`);
    }
    addJsonTrace(value, this.#fields, this.#builder, where);
  }
}
