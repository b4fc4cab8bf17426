/**
 * JSON array files, `[trace, trace, ...]`, read element by element as the
 * text arrives: the splitter finds where each top-level element starts and
 * ends (tracking strings and nesting) and hands its text to `JSON.parse`, so
 * a large array never has to be held whole.
 *
 * @module
 */

import type { TraceSetBuilder } from "./builder.ts";
import { addJsonTrace, fail, type JsonFields } from "./json_trace.ts";
import { MAX_TRACE_LINE_CHARS, tooLongReason } from "./_lines.ts";

const enum State {
  /** Before the opening `[`. */
  Start,
  /** After `[`: an element or `]`. */
  First,
  /** After `,`: an element. */
  Next,
  /** Inside an element. */
  Element,
  /** After the closing `]`: white space only. */
  Done,
}

const SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/**
 * Splits a JSON array's text, pushed in chunks, into its elements' texts,
 * each with the line it starts on and its 1-based position.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { JsonArraySplitter } from "./json_array.ts";
 * const s = new JsonArraySplitter("a.json");
 * const out: string[] = [];
 * s.push('[{"a": [1, "]"]},\n 2', (text) => out.push(text));
 * s.push("]", (text) => out.push(text));
 * s.end();
 * assert.deepEqual(out, ['{"a": [1, "]"]}', "2"]);
 * ```
 */
export class JsonArraySplitter {
  readonly #file: string;
  #state = State.Start;
  #depth = 0;
  #inString = false;
  #escaped = false;
  #parts: string[] = [];
  /** Characters of the element held in `#parts`. */
  #held = 0;
  #line = 1;
  #elementLine = 1;
  #count = 0;

  /** `file` names the source in errors. */
  constructor(file: string) {
    this.#file = file;
  }

  /** Elements found so far. */
  get elements(): number {
    return this.#count;
  }

  /** The line reached so far (1-based). */
  get line(): number {
    return this.#line;
  }

  /** Emits every element `chunk` completes. */
  push(
    chunk: string,
    emit: (text: string, line: number, element: number) => void,
  ): void {
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (this.#state === State.Element) {
        if (this.#inString) {
          if (this.#escaped) this.#escaped = false;
          else if (c === 0x5c) this.#escaped = true;
          else if (c === 0x22) this.#inString = false;
          else if (c === 0x0a) this.#line++;
          continue;
        }
        if (c === 0x22) this.#inString = true;
        else if (c === 0x7b || c === 0x5b) this.#depth++;
        else if ((c === 0x7d || c === 0x5d) && this.#depth > 0) this.#depth--;
        else if (c === 0x0a) this.#line++;
        else if (this.#depth === 0 && (c === 0x2c || c === 0x5d)) {
          this.#hold(i - start);
          this.#parts.push(chunk.slice(start, i));
          const text = this.#parts.join("").trim();
          this.#parts = [];
          this.#held = 0;
          emit(text, this.#elementLine, this.#count);
          this.#state = c === 0x2c ? State.Next : State.Done;
        }
        continue;
      }
      if (c === 0x0a) this.#line++;
      if (
        SPACE.has(c) || (c === 0xfeff && this.#state === State.Start && i === 0)
      ) continue;
      switch (this.#state) {
        case State.Start:
          if (c !== 0x5b) {
            this.#error(
              `a JSON array file must start with "[": found ${
                JSON.stringify(chunk[i])
              }`,
            );
          }
          this.#state = State.First;
          break;
        case State.First:
        case State.Next:
          if (c === 0x5d && this.#state === State.First) {
            this.#state = State.Done;
          } else if (c === 0x2c || c === 0x5d) {
            this.#error(
              `element ${this.#count + 1} is missing (a comma too many?)`,
            );
          } else {
            this.#state = State.Element;
            this.#count++;
            this.#elementLine = this.#line;
            start = i;
            i--; // read its first character as part of the element
          }
          break;
        case State.Done:
          this.#error(`text after the closing "]" of the array`);
      }
    }
    if (this.#state === State.Element) {
      this.#hold(chunk.length - start);
      this.#parts.push(chunk.slice(start));
    }
  }

  /** Counts `n` more characters of the element; refuses one over the bound. */
  #hold(n: number): void {
    this.#held += n;
    if (this.#held > MAX_TRACE_LINE_CHARS) {
      fail(
        `${this.#file}:${this.#elementLine}: element ${this.#count}`,
        tooLongReason("element", MAX_TRACE_LINE_CHARS),
      );
    }
  }

  /** Checks the array was closed. */
  end(): void {
    if (this.#state === State.Start) this.#error("empty file: expected [");
    if (this.#state !== State.Done) {
      this.#error(
        `the file ends before the array's closing "]" (in element ${
          this.#count + (this.#state === State.Element ? 0 : 1)
        })`,
      );
    }
  }

  #error(reason: string): never {
    fail(`${this.#file}:${this.#line}`, reason);
  }
}

/** Reads a JSON array of traces, pushed in chunks, into a builder. */
export class JsonArrayReader {
  readonly #file: string;
  readonly #fields: JsonFields;
  readonly #builder: TraceSetBuilder;
  readonly #splitter: JsonArraySplitter;
  readonly #element = (text: string, line: number, element: number) =>
    this.#add(text, line, element);

  /** Reads `file`'s elements into `builder`. */
  constructor(file: string, builder: TraceSetBuilder, fields: JsonFields) {
    this.#file = file;
    this.#builder = builder;
    this.#fields = fields;
    this.#splitter = new JsonArraySplitter(file);
  }

  /** The line reached so far. */
  get lines(): number {
    return this.#splitter.line;
  }

  /** Reads the elements `chunk` completes. */
  push(chunk: string): void {
    this.#splitter.push(chunk, this.#element);
  }

  /** Checks the array was closed. */
  end(): void {
    this.#splitter.end();
  }

  #add(text: string, line: number, element: number): void {
    const where = `${this.#file}:${line}: element ${element}`;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      fail(where, `not valid JSON (${(e as Error).message})`);
    }
    addJsonTrace(value, this.#fields, this.#builder, where);
  }
}
