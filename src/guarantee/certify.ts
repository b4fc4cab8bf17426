/**
 * Choosing the certified threshold with a finite-sample guarantee.
 *
 * Learn-then-Test with a fixed-sequence test *with fallback* (Wiens 2003):
 * the candidate thresholds, their order (strict to lenient) and a level for
 * each are fixed before any calibration label is read, from the validation
 * answers and the size of the calibration split alone
 * (`planCertification`). Each candidate `t` is tested on the `n` calibration
 * answers with confidence at least `t` and their `k` disagreements with the
 * exact binomial tail: it is rejected (the threshold is safe) when
 * `P(Binomial(n, alpha) <= k)` is at most its level. A rejected candidate
 * hands its level on to the next one; one that is not rejected hands nothing
 * on, and the next is tested at its own level only. So levels add up along a
 * run of passes, and one failure does not end the scan. The family-wise error
 * stays at most the sum of the levels, `delta`: with probability at least
 * `1 - delta` over the calibration data, every rejected candidate certifies
 * answers that disagree with the reference model at most `alpha` of the
 * time; the most lenient of them is the threshold.
 *
 * Answers that share a unit of the split (a group, or a cluster of
 * near-duplicates) are not independent: near-identical texts get the same
 * answer, right or wrong. Given the units, the test counts the certified
 * answers by Kish's effective sample size `n^2 / sum(n_u^2)` (as if the
 * answers within a unit were perfectly correlated: the cautious choice) and
 * their disagreements in proportion; with every answer its own unit it is
 * the plain binomial test.
 *
 * The plan puts 90% of delta on the candidate where the validation answers
 * predict the best chance of passing, and 10% on a hedge three times
 * stricter or more lenient, so that neither a few early disagreements nor an
 * optimistic prediction leaves a question uncalibrated.
 *
 * @module
 */

import {
  betaBinomialTail,
  binomialTail,
  largestPassing,
  minimumCertifiable,
} from "./distributions.ts";

/** What the threshold search found. */
export interface ThresholdChoice {
  /** The chosen threshold, or null when no candidate passed. */
  threshold: number | null;
  /** Candidates tested (those with a level above zero). */
  tested: number;
  /** Calibration answers certified at the threshold, and their disagreements. */
  certified: number;
  disagreements: number;
  /** Why nothing passed, in words (null when a threshold passed). */
  reason: string | null;
}

/** Share of delta on the predicted start; the rest goes to the hedge. */
export const START_SHARE = 0.9;
/** The hedge sits this many times stricter or more lenient than the start. */
export const HEDGE_FACTOR = 3;
/**
 * Validation answers count as this share of their number when predicting
 * where the test passes: they come from a model fitted on less data than the
 * served one, so their error rates are only a rough guide.
 */
export const VALIDATION_WEIGHT = 0.5;

/** The fixed-sequence test, set up before any calibration label is read. */
export interface CertificationPlan {
  /** Candidate thresholds, strictest first, ending with 0. */
  grid: number[];
  /** The level each candidate is tested at on its own (they sum to delta). */
  levels: number[];
  /** Coverage (share of validation answers) of the start and of the hedge. */
  start: number;
  hedge: number;
  /** The predicted chance that the start passes. */
  startChance: number;
}

/**
 * Candidate thresholds from reference confidences (not calibration labels):
 * the confidences at coverage levels from `start` to 1 in `steps` steps,
 * strictest first, duplicates dropped, ending with 0 (certify everything).
 */
export function candidateGrid(
  reference: Float64Array,
  start: number,
  steps = 200,
): number[] {
  const sorted = Float64Array.from(reference).sort();
  const n = sorted.length;
  const grid: number[] = [];
  if (n > 0) {
    for (let s = 0; s <= steps; s++) {
      const coverage = start + (1 - start) * (s / steps);
      const at = Math.min(n - 1, Math.max(0, Math.floor(n * (1 - coverage))));
      const t = sorted[at]!;
      if (grid.length === 0 || t < grid[grid.length - 1]!) grid.push(t);
    }
  }
  if (grid.length === 0 || grid[grid.length - 1]! > 0) grid.push(0);
  return grid;
}

/**
 * Where to start: the coverage level (share of the validation answers, most
 * confident first) at which the calibration test is most likely to pass.
 * For the top `m` of `N` validation answers with `e` disagreements, about
 * `m / N x calibrationSize` calibration answers sit above the same
 * confidence; their disagreement rate is taken as `Beta(w e + 1/2,
 * w (m - e) + 1/2)` (Jeffreys, validation counted at weight `w`), so the
 * chance that their disagreements stay within what the test at `level`
 * allows is a beta-binomial tail. Null when the calibration split is too
 * small for any pass. Uses validation data and sizes only.
 */
export function passStart(
  confidences: Float64Array,
  correct: Uint8Array,
  calibrationSize: number,
  alpha: number,
  level: number,
  weight = VALIDATION_WEIGHT,
): { coverage: number; chance: number } | null {
  const n = confidences.length;
  if (n === 0 || calibrationSize === 0) return null;
  const order = Array.from(confidences, (_, i) => i).sort((a, b) =>
    confidences[b]! - confidences[a]!
  );
  const wrongAt = new Int32Array(n + 1);
  for (let m = 1; m <= n; m++) {
    wrongAt[m] = wrongAt[m - 1]! + 1 - correct[order[m - 1]!]!;
  }
  // At most about 400 levels are weighed, evenly spaced, and the last.
  const step = Math.max(1, Math.floor(n / 400));
  let best: { coverage: number; chance: number } | null = null;
  const allowed = new Map<number, number>();
  for (let m = step; m <= n; m = m === n ? n + 1 : Math.min(n, m + step)) {
    const wrong = wrongAt[m]!;
    const certified = Math.floor((m / n) * calibrationSize);
    let k = allowed.get(certified);
    if (k === undefined) {
      k = largestPassing(certified, alpha, level);
      allowed.set(certified, k);
    }
    if (k < 0) continue;
    const chance = betaBinomialTail(
      k,
      certified,
      weight * wrong + 0.5,
      weight * (m - wrong) + 0.5,
    );
    if (best === null || chance > best.chance + 1e-12) {
      best = { coverage: m / n, chance };
    }
  }
  return best;
}

/**
 * Sets up the test for a question from its validation answers and the size
 * of its calibration split (never a calibration label): the candidate grid,
 * the start (`passStart`) with `START_SHARE` of delta, and a hedge with the
 * rest, `HEDGE_FACTOR` times more lenient when the start is near the fewest
 * answers that can pass, else that many times stricter.
 */
export function planCertification(
  validation: { confidences: Float64Array; correct: Uint8Array },
  calibrationSize: number,
  alpha: number,
  delta: number,
): CertificationPlan {
  const main = START_SHARE * delta;
  const side = delta - main;
  const found = passStart(
    validation.confidences,
    validation.correct,
    calibrationSize,
    alpha,
    delta,
  );
  const start = found?.coverage ?? 1;
  let hedge = start;
  if (found !== null) {
    const atStart = start * calibrationSize;
    const count = atStart < 1.6 * minimumCertifiable(alpha, main)
      ? atStart * HEDGE_FACTOR
      : Math.max(1.1 * minimumCertifiable(alpha, side), atStart / HEDGE_FACTOR);
    hedge = Math.min(1, count / calibrationSize);
  }
  const grid = candidateGrid(validation.confidences, Math.min(start, hedge));
  const levels = grid.map(() => 0);
  const sorted = Float64Array.from(validation.confidences).sort();
  // The candidate at a coverage level: the first no stricter than the
  // validation confidence there.
  const indexOf = (coverage: number) => {
    const n = sorted.length;
    if (n === 0) return grid.length - 1;
    const at = Math.min(n - 1, Math.max(0, Math.floor(n * (1 - coverage))));
    const i = grid.findIndex((g) => g <= sorted[at]!);
    return i < 0 ? grid.length - 1 : i;
  };
  levels[indexOf(start)]! += main;
  levels[indexOf(hedge)]! += side;
  return { grid, levels, start, hedge, startChance: found?.chance ?? 0 };
}

/**
 * What a test must clear to be run (a learning service spends a share of
 * delta on each test it runs, `spending.ts`, and keeps the share of one
 * unlikely to be worth it): its plan's chance of passing, and how much
 * calibration evidence it has (its number of answers). Absent
 * fields: no floor.
 */
export interface TestGate {
  /** The plan (fixed from validation answers) gives the test at least this chance of passing. */
  minPassChance?: number;
  /** The test has at least this many calibration answers. */
  minCalibration?: number;
}

/**
 * True when a test clears `gate` with its plan and `calibration`
 * answers (see `TestGate`). Reads the plan and a count, never a
 * calibration label.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { worthTesting } from "./certify.ts";
 * const plan = { grid: [0.9, 0], levels: [0.05, 0], start: 0.5, hedge: 0.2, startChance: 0.4 };
 * assert.equal(worthTesting(plan, 500, { minPassChance: 0.5 }), false);
 * assert.equal(worthTesting(plan, 500, { minPassChance: 0.3, minCalibration: 600 }), false);
 * assert.equal(worthTesting(plan, 500, { minPassChance: 0.3 }), true);
 * ```
 */
export function worthTesting(
  plan: CertificationPlan,
  calibration: number,
  gate: TestGate,
): boolean {
  return plan.startChance >= (gate.minPassChance ?? 0) &&
    calibration >= (gate.minCalibration ?? 0);
}

/**
 * The choice when a test is not run because it does not clear `gate`
 * (see `worthTesting`): nothing certified, nothing tested, and the reason
 * in words.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { notTested } from "./certify.ts";
 * const plan = { grid: [0.9, 0], levels: [0.05, 0], start: 0.5, hedge: 0.2, startChance: 0.1 };
 * const choice = notTested(plan, 500, { minPassChance: 0.5 });
 * assert.equal(choice.threshold, null);
 * assert.equal(choice.tested, 0);
 * ```
 */
export function notTested(
  plan: CertificationPlan,
  calibration: number,
  gate: TestGate,
): ThresholdChoice {
  const pct = (x: number) => `${(100 * x).toFixed(0)}%`;
  const chance = gate.minPassChance ?? 0;
  return {
    threshold: null,
    tested: 0,
    certified: 0,
    disagreements: 0,
    reason: plan.startChance < chance
      ? `not tested: the validation answers give the test about ${
        pct(plan.startChance)
      } chance of passing, under the ${
        pct(chance)
      } asked for before a test is spent`
      : `not tested: ${
        Math.round(calibration)
      } calibration answers, and the next test waits for ${
        Math.ceil(gate.minCalibration ?? 0)
      } (more evidence than the last test had)`,
  };
}

/**
 * The fixed-sequence test with fallback over a plan, on calibration
 * confidences and whether each answer disagreed with the reference model,
 * with each answer's unit when given (see the module doc). The threshold is
 * the most lenient rejected candidate.
 */
export function fallbackTest(
  confidences: Float64Array,
  wrong: Uint8Array,
  plan: Pick<CertificationPlan, "grid" | "levels">,
  alpha: number,
  units?: Int32Array,
): ThresholdChoice {
  return fixedSequence(
    plan,
    gridCounts(confidences, wrong, plan.grid, units),
    alpha,
    confidences.length,
  );
}

/**
 * What the table's rule (certify the answers whose confidence reaches the
 * candidate) certifies at each candidate of `grid` (strictest first), and
 * how many of them disagree, answers of one unit counted by their
 * effective number (see the module doc).
 */
export function gridCounts(
  confidences: Float64Array,
  wrong: Uint8Array,
  grid: readonly number[],
  units?: Int32Array,
): GridCount[] {
  const order = Array.from(confidences, (_, i) => i).sort((a, b) =>
    confidences[b]! - confidences[a]!
  );
  let at = 0;
  let n = 0;
  let k = 0;
  // Answers per unit among those certified, and the sum of their squares.
  const perUnit = new Map<number, number>();
  let squares = 0;
  return grid.map((t) => {
    while (at < order.length && confidences[order[at]!]! >= t) {
      n++;
      k += wrong[order[at]!]!;
      if (units !== undefined) {
        const u = units[order[at]!]!;
        const before = perUnit.get(u) ?? 0;
        perUnit.set(u, before + 1);
        squares += 2 * before + 1;
      }
      at++;
    }
    // Answers of one unit count as one effective sample together (Kish's
    // effective size with full correlation inside a unit): n^2 / sum n_u^2.
    const effective = units === undefined || n === 0 ? n : (n * n) / squares;
    return { n, k, effective };
  });
}

/**
 * The most answers any candidate certifies whose disagreements, as seen,
 * are at most `alpha` of them: what a threshold set with no bound to pay
 * would certify of these calibration answers. Beside what the test
 * certified, it is the price of the bound (a learning service buys more
 * evidence while that price is high); it chooses nothing.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openCount } from "./certify.ts";
 * const counts = [{ n: 50, k: 0, effective: 50 }, { n: 100, k: 4, effective: 100 }, { n: 200, k: 20, effective: 200 }];
 * assert.equal(openCount(counts, 0.05), 100);
 * ```
 */
export function openCount(counts: readonly GridCount[], alpha: number): number {
  let open = 0;
  for (const c of counts) if (c.k <= alpha * c.n && c.n > open) open = c.n;
  return open;
}

/** What a rule certifies at one candidate threshold of the calibration answers. */
export interface GridCount {
  /** Answers certified, and how many disagree with the reference model. */
  n: number;
  k: number;
  /** Their effective number (Kish, by unit); `n` when all are independent. */
  effective: number;
}

/**
 * The fixed-sequence test with fallback (see the module doc) on what a
 * certification rule certifies at each candidate of the plan (`counts`,
 * in grid order) out of `total` calibration answers: the most lenient
 * rejected candidate. `fallbackTest` is this for the table's rule (certify
 * the answers at or above a confidence); the two-tier rule counts its own.
 */
export function fixedSequence(
  plan: Pick<CertificationPlan, "grid" | "levels">,
  counts: readonly GridCount[],
  alpha: number,
  total: number,
): ThresholdChoice {
  let level = 0;
  let passed = false;
  let tested = 0;
  let threshold: number | null = null;
  let certified = 0;
  let disagreements = 0;
  for (let i = 0; i < plan.grid.length; i++) {
    const { n, k, effective } = counts[i]!;
    level = plan.levels[i]! + (passed ? level : 0);
    if (level <= 0) {
      passed = false;
      continue;
    }
    tested++;
    passed = n > 0 &&
      binomialTail((k * effective) / n, effective, alpha) <= level;
    if (passed) {
      threshold = plan.grid[i]!;
      certified = n;
      disagreements = k;
    }
  }
  if (threshold !== null) {
    return { threshold, tested, certified, disagreements, reason: null };
  }
  const delta = Number(plan.levels.reduce((a, b) => a + b, 0).toPrecision(12));
  const needed = minimumCertifiable(alpha, delta);
  return {
    threshold: null,
    tested,
    certified: 0,
    disagreements: 0,
    reason: total < needed
      ? `only ${total} calibration answers; at least ${needed} are needed at alpha ${alpha}, delta ${delta}`
      : `no candidate threshold passed the binomial test at alpha ${alpha}, delta ${delta}`,
  };
}
