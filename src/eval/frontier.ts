/**
 * The coverage frontier: at each candidate threshold, the share of answers
 * certified and their disagreement, and the smallest alpha at which that
 * threshold alone would pass the binomial test. `eval` measures it on fresh
 * traces, `train` on its calibration split (counting answers of one unit
 * together, as the test does).
 *
 * @module
 */

import { binomialTail } from "../guarantee/mod.ts";

/** One threshold of the frontier. */
export interface FrontierPoint {
  /** Certified at confidence >= this. */
  threshold: number;
  /** Answers certified at the threshold. */
  certified: number;
  /** `certified` over every answer measured; null when none was. */
  coverage: number | null;
  /** Certified answers that disagree with the reference model. */
  disagreements: number;
  /** `disagreements / certified`; null when nothing is certified. */
  disagreement: number | null;
  /**
   * Smallest alpha at which this threshold alone passes the one-sided
   * binomial test at `delta` on these answers (the upper `1 - delta`
   * Clopper-Pearson bound of the disagreement rate); null when nothing is
   * certified.
   */
  passes_at_alpha: number | null;
  /** Whether this is the threshold in force in the bundle. */
  in_force: boolean;
}

/**
 * The smallest alpha at which `k` disagreements among `n` certified answers
 * pass the binomial test at level `delta` (`P(Binomial(n, alpha) <= k) <=
 * delta`); `n` and `k` may be effective (fractional) counts. Null for `n` 0.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { alphaToPass } from "./frontier.ts";
 * // No disagreement in 59 answers passes at alpha 0.05, delta 0.05.
 * assert.ok(alphaToPass(0, 59, 0.05)! <= 0.05);
 * assert.ok(alphaToPass(0, 58, 0.05)! > 0.05);
 * ```
 */
export function alphaToPass(
  k: number,
  n: number,
  delta: number,
): number | null {
  if (n <= 0) return null;
  if (k >= n) return 1;
  let lo = 0;
  let hi = 1;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (binomialTail(k, n, mid) <= delta) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** The answers a frontier is measured on. */
export interface FrontierAnswers {
  /** Every answer measured (certifiable or not). */
  total: number;
  /**
   * Per answer that every rule but the threshold lets through: its
   * full-option confidence.
   */
  confidences: ArrayLike<number>;
  /** Per such answer, whether it disagrees with the reference model. */
  wrong: ArrayLike<boolean | number>;
  /** Per such answer, its unit (answers of one unit count together, Kish); absent: independent. */
  units?: ArrayLike<number> | undefined;
  /**
   * With a second tier served: per such answer, the second tier's
   * full-option confidence (-1 where it cannot answer: its novelty guard
   * withholds the text, or its answer is one the request removed) and
   * whether its answer disagrees. At a threshold the table's answer is
   * certified where its confidence reaches it, else the second tier's
   * where its confidence does (the two-tier rule).
   */
  second?: {
    confidences: ArrayLike<number>;
    wrong: ArrayLike<boolean | number>;
  } | undefined;
}

/**
 * The frontier at `thresholds` (strictest first in the result), the one in
 * force marked; with `answers.second`, of both tiers by the two-tier rule.
 */
export function frontierOf(
  answers: FrontierAnswers,
  thresholds: readonly number[],
  inForce: number | null,
  delta: number,
): FrontierPoint[] {
  const all = [
    ...new Set([...thresholds, ...(inForce === null ? [] : [inForce])]),
  ]
    .sort((a, b) => b - a);
  return all.map((t) => {
    let certified = 0;
    let disagreements = 0;
    const perUnit = new Map<number, number>();
    const second = answers.second;
    for (let i = 0; i < answers.confidences.length; i++) {
      if (answers.confidences[i]! >= t) {
        certified++;
        if (answers.wrong[i]) disagreements++;
      } else if (second !== undefined && second.confidences[i]! >= t) {
        certified++;
        if (second.wrong[i]) disagreements++;
      } else continue;
      if (answers.units !== undefined) {
        const u = answers.units[i]!;
        perUnit.set(u, (perUnit.get(u) ?? 0) + 1);
      }
    }
    let effective = certified;
    if (answers.units !== undefined && certified > 0) {
      let squares = 0;
      for (const c of perUnit.values()) squares += c * c;
      effective = (certified * certified) / squares;
    }
    return {
      threshold: t,
      certified,
      coverage: answers.total === 0 ? null : certified / answers.total,
      disagreements,
      disagreement: certified === 0 ? null : disagreements / certified,
      passes_at_alpha: certified === 0 ? null : alphaToPass(
        (disagreements * effective) / certified,
        effective,
        delta,
      ),
      in_force: t === inForce,
    };
  });
}

/**
 * Candidate thresholds when a bundle lists none: the confidences at every
 * tenth of the certifiable answers, strictest first.
 */
export function spreadThresholds(confidences: ArrayLike<number>): number[] {
  const sorted = Array.from(confidences).filter((c) => c >= 0).sort((a, b) =>
    b - a
  );
  if (sorted.length === 0) return [];
  const out = new Set<number>();
  for (let d = 1; d <= 10; d++) {
    out.add(
      sorted[
        Math.min(sorted.length - 1, Math.ceil(d / 10 * sorted.length) - 1)
      ]!,
    );
  }
  return [...out].sort((a, b) => b - a);
}
