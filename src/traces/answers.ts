/**
 * Answer typing: whether a question's answers, as written in one file, make
 * a yes/no question or a choice.
 *
 * A yes/no question is one whose answers all come from one spelling family:
 *
 * - `true` / `false` in any case (JSON booleans, `True` from pandas and
 *   Python, `TRUE` from R and spreadsheets, `true` from Spark and most
 *   databases);
 * - `1` / `0`, only when the answers hold nothing else (MySQL, SQLite and SQL
 *   Server write booleans so, but a column of `1`, `2`, `0` is a choice);
 * - `t` / `f` in any case, only when the answers hold nothing else (how
 *   PostgreSQL exports booleans).
 *
 * `yes` / `no` stay a choice of two options: no common data tool writes
 * booleans that way, and a language model's answers worded so may well be
 * meant as options.
 *
 * @module
 */

import type { QuestionKind } from "../engine/table.ts";

/** The options of a yes/no question, in the order labels refer to. */
export const YES_NO_OPTIONS: readonly string[] = ["true", "false"];

/** Spelling families of yes/no answers: per family, what reads as yes and as no. */
const FAMILIES: readonly ((raw: string) => boolean | undefined)[] = [
  (raw) => {
    const low = raw.length === 4 || raw.length === 5 ? raw.toLowerCase() : "";
    return low === "true" ? true : low === "false" ? false : undefined;
  },
  (raw) => raw === "1" ? true : raw === "0" ? false : undefined,
  (raw) => {
    const low = raw.length === 1 ? raw.toLowerCase() : "";
    return low === "t" ? true : low === "f" ? false : undefined;
  },
];

/** A question's kind and options, decided from its distinct answers. */
export interface TypedAnswers {
  kind: QuestionKind;
  /** `["true", "false"]` for yes/no; otherwise the distinct answers as written. */
  options: string[];
  /** Per distinct answer (in the order given), its index in `options`. */
  index: Int32Array;
}

/**
 * Types a question from its distinct answers as written (JSON booleans as
 * `"true"` / `"false"`), in order of first appearance.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { typeAnswers } from "./answers.ts";
 * assert.equal(typeAnswers(["True", "FALSE"]).kind, "yes_no");
 * assert.equal(typeAnswers(["1", "0"]).kind, "yes_no");
 * assert.equal(typeAnswers(["1", "0", "2"]).kind, "choice");
 * assert.equal(typeAnswers(["yes", "no"]).kind, "choice");
 * ```
 */
export function typeAnswers(distinct: readonly string[]): TypedAnswers {
  const index = new Int32Array(distinct.length);
  for (const family of FAMILIES) {
    let all = distinct.length > 0;
    for (let i = 0; i < distinct.length && all; i++) {
      const yes = family(distinct[i]!);
      if (yes === undefined) all = false;
      else index[i] = yes ? 0 : 1;
    }
    if (all) return { kind: "yes_no", options: [...YES_NO_OPTIONS], index };
  }
  index.forEach((_, i) => (index[i] = i));
  return { kind: "choice", options: [...distinct], index };
}

/** A few words on a question's kind and answers, for error messages. */
export function describeAnswers(typed: TypedAnswers): string {
  if (typed.kind === "yes_no") return "yes/no";
  const shown = typed.options.slice(0, 3).map((o) => JSON.stringify(o));
  const more = typed.options.length > 3 ? ", ..." : "";
  return `a choice (${shown.join(", ")}${more})`;
}
