/**
 * Choosing the certified threshold with a finite-sample guarantee.
 *
 * Learn-then-Test with fixed-sequence testing: the candidate thresholds are
 * fixed before any calibration label is looked at (from confidences on data
 * carved out of the training split), ordered from strict to lenient, and
 * start where that data predicts the strongest evidence (`scanStart`).
 * Each candidate `t` is tested on the `n` calibration answers with
 * confidence at least `t` and their `k` disagreements with the exact
 * binomial tail: it passes when `P(Binomial(n, alpha) <= k) <= delta`. The
 * scan stops at the first failure; the last passing candidate is the
 * threshold. With probability at least `1 - delta` over the calibration
 * data, the disagreement rate among certified answers is then at most
 * `alpha`.
 *
 * @module
 */

import { binomialTail, minimumCertifiable } from "./stats.ts";

/** What the threshold search found. */
export interface ThresholdChoice {
  /** The chosen threshold, or null when no candidate passed. */
  threshold: number | null;
  /** Candidates tested before the scan stopped. */
  tested: number;
  /** Calibration answers certified at the threshold, and their disagreements. */
  certified: number;
  disagreements: number;
  /** Why nothing passed, in words (null when a threshold passed). */
  reason: string | null;
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
 * Where the fixed-sequence scan should start, as a coverage level: the level
 * at which the validation answers predict the strongest evidence (their
 * smoothed error rate among the most confident, scaled to the calibration
 * size, gives the smallest binomial p-value), from about `preferred`
 * certified calibration answers up; the strictest such level on ties. A
 * start that is too strict fails for lack of answers, one too lenient for
 * too many disagreements; at the strongest point a failure is least likely,
 * and the scan then goes on to more lenient candidates. When no level is
 * predicted to pass, the preferred one. Uses validation data only.
 */
export function scanStart(
  confidences: Float64Array,
  correct: Uint8Array,
  calibrationSize: number,
  preferred: number,
  alpha: number,
  delta: number,
): number {
  const fallback = Math.min(1, preferred / calibrationSize);
  const n = confidences.length;
  if (n === 0) return fallback;
  const order = Array.from(confidences, (_, i) => i).sort((a, b) =>
    confidences[b]! - confidences[a]!
  );
  const wrongAt = new Int32Array(n + 1);
  for (let top = 1; top <= n; top++) {
    wrongAt[top] = wrongAt[top - 1]! + 1 - correct[order[top - 1]!]!;
  }
  // Predicted p-value: the validation error rate (smoothed) scaled to the calibration size.
  const predicted = (top: number) => {
    const certified = Math.floor((top / n) * calibrationSize);
    const wrong = Math.ceil(certified * (wrongAt[top]! + 1) / (top + 1));
    return binomialTail(wrong, certified, alpha);
  };
  let best = fallback;
  let bestP = delta / 2;
  const first = Math.max(1, Math.round(fallback * n));
  for (let top = first; top <= n; top++) {
    const p = predicted(top);
    if (p < bestP) {
      bestP = p;
      best = top / n;
    }
  }
  return best;
}

/**
 * Fixed-sequence test over `grid` (strictest first) on calibration
 * confidences and whether each answer disagreed with the reference model.
 */
export function chooseThreshold(
  confidences: Float64Array,
  wrong: Uint8Array,
  grid: readonly number[],
  alpha: number,
  delta: number,
): ThresholdChoice {
  const order = Array.from(confidences, (_, i) => i).sort((a, b) =>
    confidences[b]! - confidences[a]!
  );
  let at = 0;
  let n = 0;
  let k = 0;
  let chosen: ThresholdChoice = {
    threshold: null,
    tested: 0,
    certified: 0,
    disagreements: 0,
    reason: null,
  };
  let tested = 0;
  for (const t of grid) {
    while (at < order.length && confidences[order[at]!]! >= t) {
      n++;
      k += wrong[order[at]!]!;
      at++;
    }
    tested++;
    if (binomialTail(k, n, alpha) > delta) break;
    chosen = {
      threshold: t,
      tested,
      certified: n,
      disagreements: k,
      reason: null,
    };
  }
  if (chosen.threshold === null) {
    const needed = minimumCertifiable(alpha, delta);
    chosen = {
      threshold: null,
      tested,
      certified: 0,
      disagreements: 0,
      reason: confidences.length < needed
        ? `only ${confidences.length} calibration answers; at least ${needed} are needed at alpha ${alpha}, delta ${delta}`
        : `no candidate threshold passed the binomial test at alpha ${alpha}, delta ${delta}`,
    };
  } else {
    chosen.tested = tested;
  }
  return chosen;
}
