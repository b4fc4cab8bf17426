/**
 * The out-of-scope rule: a single text the table answers in a way unlike
 * the calibration texts is not certified, even when its confidence reaches
 * the threshold. It guards requests for none of the options and texts
 * written apart from the traces (new writers, new phrasings) alike.
 *
 * The score is the answer's *spread*: the negative entropy of its
 * probabilities over all options, `sum_j p_j ln p_j` (0 for a sure answer,
 * lower the more the probability is spread over other options). A request
 * for none of the options, or a phrasing the table has not met, leaves the
 * table unsure among many options, even when one of them still leads.
 * Measured against the alternatives on every data set of the project (see
 * `docs/benchmarks.md`), the spread separated such texts best: at 95% of
 * in-scope texts kept, it kept 5-11% of banking texts of another writer
 * and of hotel requests where the energy (`T log sum exp(logit / T)`, the
 * rule of format 2 bundles) kept 61-70%, and it was at least as good as
 * the confidence on held-out options of the same domain.
 *
 * With two options the spread is a function of the confidence alone and
 * says nothing the threshold does not; the rule then applies to choices
 * among three options or more only. Bundles of format 2 keep the energy
 * rule they were calibrated with.
 *
 * The rule is a conformal test against the calibration texts' scores: a
 * text's p-value is the share of calibration texts scoring at or below its
 * own (plus one, over n + 1); at or below `scope_p` it is not certified. By
 * exchangeability this withholds at most `scope_p` of texts like the
 * calibration ones, fewer of the certified ones (unsure answers are mostly
 * below the threshold anyway), and the certification test applies the same
 * rule to the calibration texts (leave one out), so the threshold accounts
 * for it.
 *
 * @module
 */

import { countAtMost } from "./_sorted.ts";

/** Which score a question's out-of-scope rule judges. */
export type ScopeScore = "spread" | "energy";

/** Every score the rule can judge. */
export const SCOPE_SCORES: readonly ScopeScore[] = ["spread", "energy"];

/**
 * What the out-of-scope rule compares a text with: the calibration texts'
 * scores of kind `score`, sorted ascending. No score (questions of two
 * options) or no values turn the rule off for the question.
 */
export interface ScopeReference {
  score: ScopeScore | null;
  values: Float32Array;
}

/** A reference that turns the rule off. */
export const NO_SCOPE: ScopeReference = {
  score: null,
  values: new Float32Array(0),
};

/**
 * True when a score says more than the confidence: three options or more.
 * With two options (and yes/no), the spread and the energy of the answer
 * are both functions of its confidence (the table's two rows are
 * opposites), so the rule would only raise the threshold.
 */
export function scopeApplies(options: number): boolean {
  return options >= 3;
}

/**
 * The spread of an answer: `sum_j p_j ln p_j` over its probabilities over
 * all options, 0 for a sure answer and `-ln K` when spread evenly over `K`.
 * Computed from the softmax's own terms with one logarithm: with
 * `p = softmax(logits / t)` and `best` its largest entry,
 * `ln p_j = (logit_j - logit_best) / t + ln p_best`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { softmax } from "./score.ts";
 * import { spreadOf } from "./scope.ts";
 * const logits = Float64Array.of(2, 1, 0);
 * const p = softmax(logits, 1);
 * const spread = spreadOf(logits, 1, p, 0); // as sum p ln p
 * assert.ok(Math.abs(spread - p.reduce((s, x) => s + x * Math.log(x), 0)) < 1e-9);
 * ```
 */
export function spreadOf(
  logits: ArrayLike<number>,
  t: number,
  probabilities: ArrayLike<number>,
  best: number,
): number {
  const top = logits[best]!;
  let s = 0;
  for (let j = 0; j < probabilities.length; j++) {
    s += probabilities[j]! * (logits[j]! - top);
  }
  return s / t + Math.log(probabilities[best]!);
}

/**
 * The energy of an answer from the softmax's own terms, with one
 * logarithm: with `p = softmax(logits / t)` and `best` its largest entry,
 * `t log sum exp(logit / t) = logit_best - t ln p_best`. The same number as
 * `energyOf`, without a second pass of exponentials.
 */
export function energyOfAnswer(
  logits: ArrayLike<number>,
  t: number,
  probabilities: ArrayLike<number>,
  best: number,
): number {
  return logits[best]! - t * Math.log(probabilities[best]!);
}

/**
 * The energy of raw scores at temperature `t`: `t log sum exp(logit / t)`,
 * computed stably. Higher means more evidence for some option.
 */
export function energyOf(logits: ArrayLike<number>, t: number): number {
  let max = -Infinity;
  for (let j = 0; j < logits.length; j++) {
    if (logits[j]! > max) max = logits[j]!;
  }
  if (max === -Infinity) return -Infinity;
  let sum = 0;
  for (let j = 0; j < logits.length; j++) {
    sum += Math.exp((logits[j]! - max) / t);
  }
  return max + t * Math.log(sum);
}

/**
 * Conformal p-value of a text's score against the calibration texts'
 * scores (ascending): `(#{s_i <= score} + 1) / (n + 1)`. Small means the
 * text scores lower than almost every calibration text.
 */
export function scopePValue(sorted: Float32Array, score: number): number {
  return (countAtMost(sorted, Math.fround(score)) + 1) / (sorted.length + 1);
}

/**
 * True when a text's score is in scope: no calibration reference, or a
 * p-value above `scopeP` (0 turns the rule off).
 */
export function looksInScope(
  scopeP: number,
  sorted: Float32Array,
  score: number,
): boolean {
  return scopeP <= 0 || sorted.length === 0 ||
    scopePValue(sorted, score) > scopeP;
}

/**
 * For each of `n` calibration texts, whether the rule would pass it with
 * its p-value taken against the other calibration texts (leave one out):
 * what the certification test must see so that the threshold it picks
 * covers the rule too. `scores` holds the texts' scores in any order, or
 * nothing when the rule does not apply to the question (then all pass);
 * the flags follow that order.
 */
export function calibrationInScope(
  scores: Float32Array,
  scopeP: number,
  n: number = scores.length,
): Uint8Array {
  const out = new Uint8Array(n).fill(1);
  if (scopeP <= 0 || scores.length < 2) return out;
  if (scores.length !== n) {
    throw new RangeError(
      `Expected ${n} calibration scores or none: got ${scores.length}`,
    );
  }
  const sorted = Float32Array.from(scores).sort();
  for (let i = 0; i < n; i++) {
    // Others at or below: all at or below, minus the text itself.
    const below = countAtMost(sorted, scores[i]!) - 1;
    if ((below + 1) / n <= scopeP) out[i] = 0;
  }
  return out;
}
