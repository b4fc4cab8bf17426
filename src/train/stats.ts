/**
 * The distributions certification needs, from jStat's well-tested special
 * functions (regularised incomplete beta and its inverse).
 *
 * @module
 */

import jStatModule from "jstat";

interface JStat {
  ibeta(x: number, a: number, b: number): number;
  beta: { inv(p: number, a: number, b: number): number };
}
const { jStat } = jStatModule as unknown as { jStat: JStat };

/** `P(Binomial(n, p) <= k)`, as the regularised incomplete beta `I_{1-p}(n - k, k + 1)`. */
export function binomialTail(k: number, n: number, p: number): number {
  if (k < 0) return 0;
  if (k >= n) return 1;
  return jStat.ibeta(1 - p, n - k, k + 1);
}

/**
 * Two-sided Clopper-Pearson interval for `k` successes out of `n` at
 * confidence `level` (0.95 by default); null bounds when `n` is 0.
 */
export function clopperPearson(
  k: number,
  n: number,
  level = 0.95,
): { lower: number | null; upper: number | null } {
  if (n === 0) return { lower: null, upper: null };
  const tail = (1 - level) / 2;
  const lower = k === 0 ? 0 : jStat.beta.inv(tail, k, n - k + 1);
  const upper = k === n ? 1 : jStat.beta.inv(1 - tail, k + 1, n - k);
  return { lower, upper };
}

/** Fewest certified answers with zero disagreements that can pass at (alpha, delta). */
export function minimumCertifiable(alpha: number, delta: number): number {
  return Math.ceil(Math.log(delta) / Math.log(1 - alpha));
}
