/**
 * Reading traces: JSON Lines or CSV, to texts and per-question answers.
 *
 * @module
 */

import { parse as parseCsv } from "csv-parse/sync";
import { stateText } from "../engine/text.ts";
import type { QuestionKind } from "../engine/table.ts";

/** One question's answers across the traces (undefined where not answered). */
export interface QuestionAnswers {
  name: string;
  kind: QuestionKind;
  /** Options in order of first appearance; `["true", "false"]` for yes/no. */
  options: string[];
  /** Per trace, the index of the answer in `options`, or -1 when not answered. */
  labels: Int32Array;
}

/** Parsed traces. */
export interface TraceSet {
  texts: string[];
  questions: QuestionAnswers[];
}

/** Raw answers: per question, per trace. */
type RawAnswer = string | boolean | undefined;

/** Parses traces from a file's contents; `.csv` files (by name) as CSV, anything else as JSON Lines. */
export function parseTraces(file: string, content: string): TraceSet {
  return file.toLowerCase().endsWith(".csv")
    ? parseCsvTraces(file, content)
    : parseJsonlTraces(file, content);
}

function fail(file: string, line: number, reason: string): never {
  throw new SyntaxError(`${file}:${line}: ${reason}`);
}

/** JSON Lines: `{"text": string | object, "answers": {question: option | true | false}}` per line. */
export function parseJsonlTraces(file: string, content: string): TraceSet {
  const texts: string[] = [];
  const raw = new Map<string, RawAnswer[]>();
  const lines = content.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (e) {
      fail(file, i + 1, `not valid JSON (${(e as Error).message})`);
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      fail(
        file,
        i + 1,
        'a trace must be a JSON object with "text" and "answers"',
      );
    }
    const { text, answers } = value as Record<string, unknown>;
    if (
      typeof text !== "string" && (typeof text !== "object" || text === null)
    ) {
      fail(file, i + 1, '"text" must be a string or an object');
    }
    if (
      typeof answers !== "object" || answers === null || Array.isArray(answers)
    ) {
      fail(
        file,
        i + 1,
        '"answers" must be an object of question to option, true or false',
      );
    }
    const row = texts.length;
    texts.push(stateText(text));
    for (const [q, a] of Object.entries(answers as Record<string, unknown>)) {
      if (a === null) continue;
      if (typeof a !== "string" && typeof a !== "boolean") {
        fail(file, i + 1, `answer to "${q}" must be a string, true or false`);
      }
      if (typeof a === "string" && a === "") {
        fail(file, i + 1, `answer to "${q}" is an empty string`);
      }
      let column = raw.get(q);
      if (column === undefined) raw.set(q, column = []);
      column[row] = a;
    }
  }
  return { texts, questions: toQuestions(file, raw, texts.length) };
}

/** CSV: a `text` column and one column per question; empty cells are unanswered. */
export function parseCsvTraces(file: string, content: string): TraceSet {
  let records: string[][];
  try {
    records = parseCsv(content, {
      skip_empty_lines: true,
      relax_column_count: false,
      bom: true,
    });
  } catch (e) {
    const err = e as Error & { lines?: number };
    fail(file, err.lines ?? 0, `not valid CSV (${err.message})`);
  }
  if (records.length === 0) {
    fail(file, 1, 'empty file: a header with a "text" column is needed');
  }
  const header = records[0]!.map((h) => h.trim());
  const textAt = header.indexOf("text");
  if (textAt < 0) fail(file, 1, 'the header has no "text" column');
  if (header.length < 2) {
    fail(file, 1, 'the header names no question column besides "text"');
  }
  const texts: string[] = [];
  const raw = new Map<string, RawAnswer[]>();
  for (const [c, name] of header.entries()) {
    if (c === textAt) continue;
    if (name === "") fail(file, 1, `column ${c + 1} has no name`);
    if (raw.has(name)) fail(file, 1, `column "${name}" appears twice`);
    raw.set(name, []);
  }
  for (let r = 1; r < records.length; r++) {
    const rec = records[r]!;
    const row = texts.length;
    texts.push(rec[textAt]!);
    for (const [c, name] of header.entries()) {
      if (c === textAt) continue;
      const cell = rec[c]!.trim();
      if (cell === "") continue;
      raw.get(name)![row] = cell === "true"
        ? true
        : cell === "false"
        ? false
        : cell;
    }
  }
  return { texts, questions: toQuestions(file, raw, texts.length) };
}

function toQuestions(
  file: string,
  raw: Map<string, RawAnswer[]>,
  n: number,
): QuestionAnswers[] {
  const out: QuestionAnswers[] = [];
  for (const [name, column] of raw) {
    const values = column.filter((v) => v !== undefined);
    const allBool = values.every((v) => typeof v === "boolean");
    const kind: QuestionKind = allBool ? "yes_no" : "choice";
    const options: string[] = allBool ? ["true", "false"] : [];
    const index = new Map<string, number>(options.map((o, i) => [o, i]));
    const labels = new Int32Array(n).fill(-1);
    for (let i = 0; i < n; i++) {
      const v = column[i];
      if (v === undefined) continue;
      const key = String(v);
      let at = index.get(key);
      if (at === undefined) {
        at = options.length;
        options.push(key);
        index.set(key, at);
      }
      labels[i] = at;
    }
    out.push({ name, kind, options, labels });
  }
  if (out.length === 0) {
    throw new RangeError(`${file}: no trace answers any question`);
  }
  return out;
}
