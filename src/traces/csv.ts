/**
 * CSV and TSV traces: a header naming the text column, optional `time` and
 * `group` columns, and one column per question; an empty cell is "not
 * answered". Parsing itself is csv-parse's; this module turns its records
 * into traces, the same way for a whole text and for a stream.
 *
 * @module
 */

import { CsvError } from "csv-parse/sync";
import type { TraceSetBuilder } from "./builder.ts";
import { checkFields, fail } from "./json_trace.ts";
import { MAX_TRACE_LINE_CHARS } from "./_lines.ts";
import { cellTime } from "./provenance.ts";
import type { TraceParseOptions } from "./types.ts";

/**
 * The csv-parse options for a delimiter, `,` (strict quoting) or a tab
 * (quotes inside fields kept as written), handing each record to `reader` as
 * it is parsed (nothing is collected).
 */
export function csvParseOptions(delimiter: "," | "\t", reader: CsvTraceReader) {
  return {
    delimiter,
    bom: true,
    skip_empty_lines: true,
    relax_column_count: false,
    relax_quotes: delimiter === "\t",
    // A record held whole is bounded like a line of JSON Lines.
    max_record_size: MAX_TRACE_LINE_CHARS,
    on_record: (record: string[], info: CsvRecordInfo) => {
      reader.add(record, info);
      return null;
    },
  };
}

/** What csv-parse says about a record (its `on_record` context). */
export interface CsvRecordInfo {
  /** The line the record ends on. */
  lines: number;
  /** Empty lines skipped so far. */
  empty_lines: number;
}

/** A column the header names "", or `Unnamed: N` (what pandas makes of such a column when it reads and writes it again). */
const UNNAMED = /^(?:Unnamed: \d+)?$/;

/**
 * Reads CSV records into a builder: the first record is the header, every
 * other a trace. Errors name the file and the line a record starts on.
 */
export class CsvTraceReader {
  readonly #file: string;
  readonly #options: TraceParseOptions;
  readonly #builder: TraceSetBuilder;
  #lastLine = 0;
  #lastEmpty = 0;
  #text = -1;
  #time = -1;
  #group = -1;
  #answers: { name: string; at: number }[] = [];
  #header = false;

  readonly #every: (() => void) | undefined;
  #sinceEvery = 0;

  /**
   * Reads `file`'s records into `builder`, calling `every` after each 1,024
   * records; throws `RangeError` for column names that cannot be (see
   * `checkFields`).
   */
  constructor(
    file: string,
    builder: TraceSetBuilder,
    options: TraceParseOptions,
    every?: () => void,
  ) {
    checkFields(options);
    this.#file = file;
    this.#builder = builder;
    this.#options = options;
    this.#every = every;
  }

  /** The line the last record ended on. */
  get line(): number {
    return this.#lastLine;
  }

  /** The line the last record started on. */
  #startLine(info: CsvRecordInfo): number {
    const start = this.#lastLine + 1 + (info.empty_lines - this.#lastEmpty);
    this.#lastLine = info.lines;
    this.#lastEmpty = info.empty_lines;
    return start;
  }

  /** Adds one record: the header first, then traces. */
  add(record: string[], info: CsvRecordInfo): void {
    const line = this.#startLine(info);
    if (!this.#header) {
      this.#readHeader(record, line);
      this.#header = true;
      return;
    }
    const where = `${this.#file}:${line}`;
    const time = this.#time < 0
      ? { seconds: NaN }
      : cellTime(record[this.#time]!.trim());
    if ("reason" in time) fail(where, time.reason);
    const group = this.#group < 0 ? "" : record[this.#group]!.trim();
    const row = this.#builder.addTrace(
      record[this.#text]!,
      time.seconds,
      group === "" ? undefined : group,
    );
    for (const { name, at } of this.#answers) {
      const cell = record[at]!.trim();
      if (cell !== "") this.#builder.answer(row, name, cell, where);
    }
    if (this.#every !== undefined && ++this.#sinceEvery === 1024) {
      this.#sinceEvery = 0;
      this.#every();
    }
  }

  /** Checks that the file had a header. */
  end(): void {
    if (!this.#header) {
      fail(
        `${this.#file}:1`,
        `empty file: a header with a "${
          this.#options.textColumn ?? "text"
        }" column is needed`,
      );
    }
  }

  #readHeader(record: string[], line: number): void {
    const where = `${this.#file}:${line}`;
    const names = record.map((h) => h.trim());
    const textName = this.#options.textColumn ?? "text";
    const columns = columnList(names.filter((n) => !UNNAMED.test(n)));
    const at = (name: string) => {
      const first = names.indexOf(name);
      if (first >= 0 && names.indexOf(name, first + 1) >= 0) {
        fail(where, `column "${name}" appears twice`);
      }
      return first;
    };
    this.#text = at(textName);
    if (this.#text < 0) {
      const named = this.#options.textColumn === undefined
        ? "name the column that holds the text with --text-column NAME"
        : "the column --text-column names";
      fail(
        where,
        `the header has no "${textName}" column (columns: ${columns}); ${named}`,
      );
    }
    this.#time = at("time");
    this.#group = at("group");
    const special = new Set([textName, "time", "group"]);
    const wanted = this.#options.answerColumns;
    if (wanted !== undefined) {
      for (const name of wanted) {
        const c = at(name);
        if (c < 0) {
          fail(
            where,
            `the header has no "${name}" column (columns: ${columns})`,
          );
        }
        this.#answers.push({ name, at: c });
      }
    } else {
      names.forEach((name, c) => {
        if (special.has(name)) return;
        if (UNNAMED.test(name)) {
          this.#options.note?.(
            `${this.#file}: column ${c + 1} ${
              name === "" ? "has no name" : `is "${name}"`
            }: ignored (an index column, as pandas writes)`,
          );
          return;
        }
        at(name);
        this.#answers.push({ name, at: c });
      });
    }
    if (this.#answers.length === 0) {
      fail(
        where,
        `the header names no question column besides "${textName}" (columns: ${columns})`,
      );
    }
  }
}

/** Columns shown in an error message before the rest are counted. */
const SHOWN_COLUMNS = 8;

/**
 * The header's column names for an error message: the first few, quoted
 * (a long name cut), then how many more; a header of 100,000 columns makes
 * a short message.
 */
export function columnList(names: readonly string[]): string {
  const shown = names.slice(0, SHOWN_COLUMNS).map((n) =>
    JSON.stringify(n.length > 40 ? `${n.slice(0, 40)}...` : n)
  ).join(", ");
  return names.length <= SHOWN_COLUMNS
    ? shown
    : `${shown} and ${
      (names.length - SHOWN_COLUMNS).toLocaleString("en-US")
    } more: ${names.length.toLocaleString("en-US")} columns`;
}

/** The one-line error of a record csv-parse refused, with the line it names; other errors (ours) as they are. */
export function csvError(file: string, e: unknown): unknown {
  if (!(e instanceof CsvError)) return e;
  const err = e as Error & { lines?: number };
  // csv-parse may quote the field it refused: cut it.
  const message = err.message.length <= 200
    ? err.message
    : `${err.message.slice(0, 200)}...`;
  return new SyntaxError(
    `${file}:${err.lines ?? 0}: not valid CSV (${message})`,
  );
}
