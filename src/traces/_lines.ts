/**
 * Line reading: text arriving in chunks, split into lines. `\n` and `\r\n`
 * both end a line; a last line without a newline is a line too. A line
 * longer than `MAX_TRACE_LINE_CHARS` is refused as it arrives, before it is
 * held whole.
 *
 * @module
 */

/**
 * Most characters of one line of a trace file (and of one element of a JSON
 * array, one CSV record): 16 Mi (16,777,216). A trace is one text and its
 * answers; a longer line is most likely not a trace (or lines that lost their
 * newlines), and held whole it could exhaust memory.
 */
export const MAX_TRACE_LINE_CHARS = 16 * 1024 * 1024;

/** The reason a line (or element, or record) over `max` characters is refused. */
export function tooLongReason(what: string, max: number): string {
  return `the ${what} is longer than ${
    max.toLocaleString("en-US")
  } characters, the most one trace may take; a trace is one text and its answers (lines that lost their newlines, or not a trace file?)`;
}

/**
 * Splits text pushed in chunks into numbered lines (1-based).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { LineSplitter } from "./_lines.ts";
 * const lines: string[] = [];
 * const s = new LineSplitter();
 * s.push("a\r\nb", (line) => lines.push(line));
 * s.push("c\nd", (line) => lines.push(line));
 * s.end((line) => lines.push(line));
 * assert.deepEqual(lines, ["a", "bc", "d"]);
 * ```
 */
export class LineSplitter {
  #rest = "";
  #line = 0;
  readonly #max: number;
  readonly #tooLong: (line: number) => never;

  /**
   * A splitter refusing a line over `max` characters: `tooLong` is called
   * with its number (it must throw) as soon as the line is known to be longer.
   */
  constructor(
    max: number = MAX_TRACE_LINE_CHARS,
    tooLong: (line: number) => never = (line) => {
      throw new RangeError(`line ${line}: ${tooLongReason("line", max)}`);
    },
  ) {
    this.#max = max;
    this.#tooLong = tooLong;
  }

  /** Lines emitted so far. */
  get lines(): number {
    return this.#line;
  }

  /** Emits every line `chunk` completes. */
  push(chunk: string, emit: (line: string, number: number) => void): void {
    let start = 0;
    let nl = chunk.indexOf("\n");
    if (nl < 0) {
      this.#check(this.#rest.length + chunk.length);
      this.#rest += chunk;
      return;
    }
    this.#check(this.#rest.length + nl);
    if (this.#rest !== "") {
      const first = this.#rest + chunk.slice(0, nl);
      this.#rest = "";
      emit(trimCr(first), ++this.#line);
      start = nl + 1;
      nl = chunk.indexOf("\n", start);
    }
    while (nl >= 0) {
      this.#check(nl - start);
      emit(trimCr(chunk.slice(start, nl)), ++this.#line);
      start = nl + 1;
      nl = chunk.indexOf("\n", start);
    }
    this.#check(chunk.length - start);
    this.#rest = chunk.slice(start);
  }

  /** Refuses the next line when it holds `length` characters (a `\r` before its newline included). */
  #check(length: number): void {
    if (length > this.#max + 1) this.#tooLong(this.#line + 1);
  }

  /** Emits the last line when the text does not end with a newline. */
  end(emit: (line: string, number: number) => void): void {
    if (this.#rest !== "") emit(trimCr(this.#rest), ++this.#line);
    this.#rest = "";
  }
}

function trimCr(line: string): string {
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}
