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

import type { QuestionKind } from "../engine/mod.ts";

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

/** Answers that keep a question from being yes/no: the rest are one boolean family. */
export interface YesNoBreak {
  /** The distinct answers outside the family (indices into the answers given). */
  breaking: number[];
  /** Answers (counted with repeats) that are in the family. */
  booleans: number;
}

/** At most this share of a question's answers may break a yes/no column for `yesNoBreak` to name them. */
const BREAK_SHARE = 0.1;

/**
 * Whether a few answers turned what would be a yes/no question into a
 * choice: the distinct answers (`counts[i]` times each) hold both values of
 * one boolean spelling family, and the others, at most 3 distinct values
 * and at most 10% of the answers, break it. Null when the question is
 * yes/no, or when its answers are a choice by more than a slip.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { yesNoBreak } from "./answers.ts";
 * assert.deepEqual(yesNoBreak(["true", "false", "yes"], [40, 59, 1]), {
 *   breaking: [2],
 *   booleans: 99,
 * });
 * assert.equal(yesNoBreak(["billing", "returns", "true"], [40, 59, 1]), null);
 * ```
 */
export function yesNoBreak(
  distinct: readonly string[],
  counts: readonly number[],
): YesNoBreak | null {
  if (typeAnswers(distinct).kind === "yes_no") return null;
  const total = counts.reduce((a, b) => a + b, 0);
  for (const family of FAMILIES) {
    let yes = false;
    let no = false;
    let booleans = 0;
    const breaking: number[] = [];
    distinct.forEach((raw, i) => {
      const value = family(raw);
      if (value === undefined) breaking.push(i);
      else {
        booleans += counts[i] ?? 0;
        if (value) yes = true;
        else no = true;
      }
    });
    if (
      yes && no && breaking.length <= 3 &&
      total - booleans <= BREAK_SHARE * total
    ) return { breaking, booleans };
  }
  return null;
}

/**
 * A few answers that broke a yes/no question, in words: which answer, how
 * often and where first (`where[i]`, `file:line`), what the question became,
 * and what to do.
 */
export function yesNoBreakInWords(
  question: string,
  distinct: readonly string[],
  counts: readonly number[],
  where: readonly (string | undefined)[],
  found: YesNoBreak,
): string {
  const shown = found.breaking.map((i) =>
    `${JSON.stringify(distinct[i])} (${counts[i]} ${
      counts[i] === 1 ? "answer" : "answers"
    }, first at ${where[i] ?? "an unknown line"})`
  );
  const meant = (raw: string) => {
    const low = raw.trim().toLowerCase();
    return ["yes", "y", "yes.", "true."].includes(low)
      ? "true"
      : ["no", "n", "no.", "false."].includes(low)
      ? "false"
      : null;
  };
  const fixes = found.breaking.map((i) => {
    const m = meant(distinct[i]!);
    return m === null
      ? null
      : `if ${JSON.stringify(distinct[i])} means ${m}, write ${m} there`;
  }).filter((f) => f !== null);
  const fix = fixes.length > 0
    ? fixes.join("; ")
    : "if they mean true or false, write true or false there";
  return `question "${question}" is read as a choice of ${distinct.length} options, not yes/no: its other ${found.booleans} answers are true or false, but ${
    shown.join(", ")
  } ${
    found.breaking.length === 1 ? "is" : "are"
  } not; ${fix} (a JSON boolean, or true/false in a CSV cell): a question is yes/no only when every answer is true or false`;
}
