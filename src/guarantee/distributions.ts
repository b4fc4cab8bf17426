/**
 * The distributions the guarantee needs, from jStat's well-tested special
 * functions (regularised incomplete beta and its inverse): the binomial
 * and beta-binomial tails of certification, and the one Clopper-Pearson
 * bound that training's figures and the feedback check both use.
 *
 * @module
 */

import jStatModule from "jstat";

interface JStat {
  ibeta(x: number, a: number, b: number): number;
  betaln(a: number, b: number): number;
  gammaln(x: number): number;
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
 * Clopper-Pearson bounds of a rate seen as `k` in `n`, each one-sided at
 * level `tail`: the rate is below `lower` (above `upper`) with probability
 * at most `tail`. `k` and `n` may be effective, non-integer counts (the
 * beta quantiles take them); 0 and 1 for no successes, no failures or no
 * answers.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { clopperPearsonBounds } from "./distributions.ts";
 * const { lower, upper } = clopperPearsonBounds(5, 100, 0.025);
 * assert.ok(lower < 0.05 && 0.05 < upper);
 * ```
 */
export function clopperPearsonBounds(
  k: number,
  n: number,
  tail: number,
): { lower: number; upper: number } {
  if (n <= 0) return { lower: 0, upper: 1 };
  return {
    lower: k <= 0 ? 0 : jStat.beta.inv(tail, k, n - k + 1),
    upper: k >= n ? 1 : jStat.beta.inv(1 - tail, k + 1, n - k),
  };
}

/**
 * Two-sided Clopper-Pearson interval for `k` successes out of `n` at
 * confidence `level` (0.95 by default): `clopperPearsonBounds` at
 * `(1 - level) / 2` each side; null bounds when `n` is 0.
 */
export function clopperPearson(
  k: number,
  n: number,
  level = 0.95,
): { lower: number | null; upper: number | null } {
  if (n === 0) return { lower: null, upper: null };
  return clopperPearsonBounds(k, n, (1 - level) / 2);
}

/**
 * The largest number of disagreements among `n` certified answers that
 * still passes the binomial test at level `level`
 * (`P(Binomial(n, alpha) <= k) <= level`), or -1 when even none does.
 */
export function largestPassing(
  n: number,
  alpha: number,
  level: number,
): number {
  if (n <= 0 || binomialTail(0, n, alpha) > level) return -1;
  // The tail grows with k: find the last k whose tail stays within the level.
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (binomialTail(mid, n, alpha) <= level) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * `P(K <= k)` for `K ~ BetaBinomial(n, a, b)`: a binomial count whose rate is
 * itself drawn from `Beta(a, b)`, as when the rate is only known from a
 * sample. Summed term by term in log space (`k + 1` terms).
 */
export function betaBinomialTail(
  k: number,
  n: number,
  a: number,
  b: number,
): number {
  if (k < 0) return 0;
  if (k >= n) return 1;
  const base = jStat.gammaln(n + 1) - jStat.betaln(a, b);
  let sum = 0;
  for (let i = 0; i <= k; i++) {
    sum += Math.exp(
      base - jStat.gammaln(i + 1) - jStat.gammaln(n - i + 1) +
        jStat.betaln(i + a, n - i + b),
    );
  }
  return Math.min(1, sum);
}

/** Fewest certified answers with zero disagreements that can pass at (alpha, delta). */
export function minimumCertifiable(alpha: number, delta: number): number {
  return Math.ceil(Math.log(delta) / Math.log(1 - alpha));
}
