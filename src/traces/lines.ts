/**
 * Line reading: text arriving in chunks, split into lines. `\n` and `\r\n`
 * both end a line; a last line without a newline is a line too.
 *
 * @module
 */

/**
 * Splits text pushed in chunks into numbered lines (1-based).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { LineSplitter } from "./lines.ts";
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

  /** Lines emitted so far. */
  get lines(): number {
    return this.#line;
  }

  /** Emits every line `chunk` completes. */
  push(chunk: string, emit: (line: string, number: number) => void): void {
    let start = 0;
    let nl = chunk.indexOf("\n");
    if (nl < 0) {
      this.#rest += chunk;
      return;
    }
    if (this.#rest !== "") {
      const first = this.#rest + chunk.slice(0, nl);
      this.#rest = "";
      emit(trimCr(first), ++this.#line);
      start = nl + 1;
      nl = chunk.indexOf("\n", start);
    }
    while (nl >= 0) {
      emit(trimCr(chunk.slice(start, nl)), ++this.#line);
      start = nl + 1;
      nl = chunk.indexOf("\n", start);
    }
    this.#rest = chunk.slice(start);
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
