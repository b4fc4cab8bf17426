/**
 * One promise over a sequence of tests: how a learning service spends a
 * question's `delta` across the calibration tests of its retrains.
 *
 * A learner tests every retrain's bundle on calibration evidence that
 * overlaps the evidence of the tests before it, and swaps in the first
 * bundle that passes. Tested each at the full `delta`, that is a test
 * repeated until it passes: over twenty retrains the chance that some
 * swapped-in bundle disagrees above `alpha` is far above `delta`. So the
 * `k`-th test a question runs is run at level `testLevel(delta, k)`, a
 * share of `delta` fixed before the first test, and the shares of every
 * test the question will ever run add up to at most `delta`. By the union
 * bound, with probability at least `1 - delta` no bundle ever swapped in
 * for the question certifies answers that disagree above `alpha`, however
 * many retrains come and whichever of them pass, whatever the tests'
 * evidence shares (the bound holds under any dependence between tests).
 *
 * The `k`-th test gets `1 / (k (k + 1))` of `delta`: the first half of it,
 * the second a sixth, the fifth 3.3%, the tenth 0.9%; the shares telescope
 * to 1. A test that is not run spends nothing, so a learner runs one only when it is worth
 * its share: when the plan (fixed from validation answers, before any
 * calibration label is read) gives it a fair chance of passing, and once
 * the question's calibration evidence has grown since its last test. Its
 * first tests, which make its first bundles from a few hundred answers,
 * keep the largest shares; later ones have thousands of answers, where a
 * smaller level costs little (the bound's slack grows with the square
 * root of the log of one over the level, and shrinks with the square root
 * of the answers).
 *
 * @module
 */

/**
 * The level of a question's `index`-th test (1 for the first) when its
 * tests share `delta` (see the module doc): `delta / (k (k + 1))`. Summed
 * over every index from 1 on, the levels make `delta` (to rounding):
 * never more. Throws `RangeError` for an index below 1 or not an integer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { testLevel } from "./spending.ts";
 * let sum = 0;
 * for (let k = 1; k <= 100_000; k++) sum += testLevel(0.05, k);
 * assert.ok(sum <= 0.05 && sum > 0.0499);
 * assert.equal(testLevel(0.05, 1), 0.025);
 * assert.equal(testLevel(0.05, 4), 0.0025);
 * ```
 */
export function testLevel(delta: number, index: number): number {
  if (!Number.isInteger(index) || index < 1) {
    throw new RangeError(
      `A test's index must be an integer >= 1: got ${index}`,
    );
  }
  return delta / (index * (index + 1));
}

/**
 * What `tests` tests of a question have spent of `delta` together.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { spentLevel, testLevel } from "./spending.ts";
 * assert.equal(spentLevel(0.05, 0), 0);
 * assert.equal(spentLevel(0.05, 2), testLevel(0.05, 1) + testLevel(0.05, 2));
 * ```
 */
export function spentLevel(delta: number, tests: number): number {
  let sum = 0;
  for (let k = 1; k <= tests; k++) sum += testLevel(delta, k);
  return sum;
}
