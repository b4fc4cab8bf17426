/**
 * How many traces an uncalibrated question would need, read from its own
 * learning curve: the table refitted on nested shares of its fit part, each
 * fit scored on the same calibration answers.
 *
 * Per coverage level (the most confident share of the calibration answers),
 * the disagreement rate of each fit is smoothed (`(k + 1/2) / (m + 1)`) and
 * a power law in the number of training answers is fitted to it by least
 * squares in log-log space (slope clamped to [-2, 0]: more traces of the
 * same kind are taken never to hurt). Growing every part of the log by a
 * factor `g` grows the training answers and the calibration answers alike;
 * the question is predicted to pass at `g` when, at some coverage level, the
 * predicted disagreements among the `g`-times-larger calibration top set,
 * plus one standard deviation (a pass at the expected count alone comes
 * about half the time), are within what the binomial test at the main
 * candidate's level allows (as `planCertification` places it:
 * `START_SHARE` of delta). The smallest such `g` is the estimate.
 *
 * The range (10th to 90th percentile) comes from a Poisson bootstrap over
 * calibration units (answers of one unit share a weight), each replicate
 * also moving the curve's slopes by a normal draw of their standard errors
 * (from the residuals of the fits): it states how much the estimate moves
 * with the calibration sample and the curve's noise, not whether the power
 * law holds far beyond the sizes it was fitted on; so extrapolation stops
 * at `MAX_GROWTH` times the current log.
 *
 * @module
 */

import { seededRandom } from "../engine/mod.ts";
import { largestPassing, START_SHARE } from "../guarantee/mod.ts";

/** Shares of the fit part the learning curve refits on; the trained table is the curve's last point. */
export const CURVE_SHARES = [0.25, 0.5, 0.75];

/** One fit of the learning curve, scored on the calibration answers. */
export interface CurvePoint {
  /** Training answers (fit share and validation) the fit saw. */
  trainAnswers: number;
  /** Per calibration answer, its confidence (-1: withheld by the out-of-scope rule, never certified). */
  confidences: Float64Array;
  /** Per calibration answer, 1 when it disagrees with the reference answer. */
  wrong: Uint8Array;
}

/** What the estimate needs besides the curve. */
export interface CurveTargets {
  alpha: number;
  delta: number;
  /** Per calibration answer, its unit (answers of one unit are not independent); absent: all independent. */
  units?: Int32Array | undefined;
  /** Bootstrap replicates for the range (default 200). */
  replicates?: number;
  /** Seed of the bootstrap. */
  seed?: number;
  /**
   * The question's options: a curve is called flat only where the table
   * has learned it, its most confident answers disagreeing at most half as
   * often as a blind guess among them would. Absent: not judged.
   */
  options?: number;
  /**
   * Read the growth a pass needs at a coverage level of at least this
   * share of the calibration answers (a calibrated question that
   * certifies little: how many traces would certify this share); 0 by
   * default (any level).
   */
  minShare?: number;
}

/** The curve's reading: how much larger the log would have to be for a pass. */
export interface CurveEstimate {
  /** Per fit (in the order given): training answers and the disagreement of its most confident answers. */
  points: { trainAnswers: number; topRate: number }[];
  /** The coverage level `topRate` is read at (share of calibration answers, at least the fewest a pass needs). */
  topShare: number;
  /** Growth factor of the whole log a pass needs (point estimate); null beyond `MAX_GROWTH`. */
  growth: number | null;
  /** The range's ends (10th and 90th bootstrap percentiles); null beyond `MAX_GROWTH`. */
  low: number | null;
  high: number | null;
  /**
   * True when the evidence points at the labels rather than the size: the
   * table has learned the question (its most confident answers disagree at
   * most half as often as a blind guess would, `options` given) or has seen
   * `ANSWERS_PER_OPTION` training answers an option (a table at a few
   * answers an option may sit at chance on clean labels: its curve says
   * nothing of them), they disagree at least alpha at every size, and the
   * smallest fit's disagree no more than the trained table's beyond two
   * standard errors.
   */
  flat: boolean;
}

/**
 * Training answers an option at which a table still at chance is taken to
 * have had its chance to learn (the curve may then be called flat).
 */
export const ANSWERS_PER_OPTION = 30;

/** Extrapolation stops here: beyond, the curve only says "many times as many". */
export const MAX_GROWTH = 20;
/** Coverage levels read, as shares of the calibration answers. */
const SHARES = Array.from({ length: 20 }, (_, i) => (i + 1) / 20);
/** Fewest answers a coverage level must hold now to be read at all. */
const FEWEST = 20;
/**
 * Growth steps tried, from 1.05 (the test failed at this size, so a pass
 * needs at least a little more) up to `MAX_GROWTH`.
 */
const STEPS = (() => {
  const steps: number[] = [];
  for (let g = 1.05; g <= MAX_GROWTH * 1.0001; g *= 1.05) steps.push(g);
  return steps;
})();

/**
 * Reads a learning curve (at least two fits of different sizes, scored on
 * the same calibration answers; the largest is the trained table). Pure and
 * deterministic for `targets.seed`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { estimateGrowth } from "./curve_estimate.ts";
 * // 400 answers; the error among the most confident halves at each doubling.
 * const point = (trainAnswers: number, every: number) => ({
 *   trainAnswers,
 *   confidences: Float64Array.from({ length: 400 }, (_, i) => 1 - i / 400),
 *   wrong: Uint8Array.from({ length: 400 }, (_, i) => i % every === 0 ? 1 : 0),
 * });
 * const e = estimateGrowth([point(250, 5), point(500, 10), point(1000, 20)], {
 *   alpha: 0.05,
 *   delta: 0.05,
 * });
 * assert.ok(e.growth !== null && e.growth > 1 && e.growth < 4);
 * ```
 */
export function estimateGrowth(
  points: readonly CurvePoint[],
  targets: CurveTargets,
): CurveEstimate {
  if (points.length < 2) throw new RangeError("a curve needs two fits");
  const n = points[0]!.confidences.length;
  const units = targets.units ?? Int32Array.from({ length: n }, (_, i) => i);
  const unitIndex = denseUnits(units);
  const unitCount = unitIndex.count;
  const orders = points.map((p) => confidentFirst(p.confidences));
  const logN = points.map((p) => Math.log(p.trainAnswers));
  const level = START_SHARE * targets.delta;
  const minShare = targets.minShare ?? 0;
  const ones = new Float64Array(unitCount).fill(1);
  const design = designEffect(unitIndex.of, unitCount);

  const passing = new Map<number, number>();
  const allowed = (m: number) => {
    let k = passing.get(m);
    if (k === undefined) {
      passing.set(m, k = largestPassing(m, targets.alpha, level));
    }
    return k;
  };
  /** The growth a pass needs for unit weights `weights`, the slopes moved by `z` standard errors. */
  const growthFor = (weights: Float64Array, z: number): number => {
    const rates = points.map((p, j) =>
      ratesAt(orders[j]!, p.wrong, unitIndex.of, weights, n)
    );
    let best = Infinity;
    SHARES.forEach((share, s) => {
      const size = share * n;
      if (size < FEWEST || share < minShare - 1e-9) return;
      const ys: number[] = [];
      for (const r of rates) {
        const v = r[s];
        if (v === undefined || Number.isNaN(v)) return;
        ys.push(Math.log(v));
      }
      const line = fitLine(logN, ys, z);
      const last = logN[logN.length - 1]!;
      for (const g of STEPS) {
        if (g >= best) break;
        const rate = Math.exp(
          line.intercept + line.slope * (last + Math.log(g)),
        );
        const m = Math.floor((size * g) / design);
        // Expected disagreements plus one standard deviation: a pass at
        // the expectation alone would come about half the time.
        const k = rate * m;
        if (k + Math.sqrt(k) <= allowed(m)) {
          best = g;
          break;
        }
      }
    });
    return best;
  };

  const growth = growthFor(ones, 0);
  const random = seededRandom(targets.seed ?? 1);
  const replicates = targets.replicates ?? 200;
  const draws: number[] = [];
  for (let b = 0; b < replicates; b++) {
    const weights = new Float64Array(unitCount);
    for (let u = 0; u < unitCount; u++) weights[u] = poisson1(random);
    draws.push(growthFor(weights, normal(random)));
  }
  draws.sort((a, b) => a - b);
  const at = (q: number) =>
    draws[Math.min(draws.length - 1, Math.floor(q * draws.length))]!;
  const finite = (g: number) => Number.isFinite(g) ? g : null;

  // The most confident answers: the top share a pass needs at least.
  const topShare = Math.min(
    1,
    Math.max(
      FEWEST,
      Math.ceil(Math.log(targets.delta) / Math.log(1 - targets.alpha)),
    ) / n,
  );
  const topRates = points.map((p, j) =>
    topRate(orders[j]!, p.wrong, Math.ceil(topShare * n))
  );
  // Falling: the first fit's top set disagrees more than the last one's by
  // over two standard errors (pooled, as for two independent samples).
  const top = Math.ceil(topShare * n);
  const first = topRates[0]!;
  const lastRate = topRates[topRates.length - 1]!;
  const pooled = (first + lastRate) / 2;
  const falling = first - lastRate >
    2 * Math.sqrt((2 * pooled * (1 - pooled)) / top);
  // Judged: the trained table has learned the question (its most confident
  // answers disagree at most half as often as a blind guess among the
  // options), or has seen enough answers of each option that it would have
  // (a coin toss stays at chance with hundreds per option: its labels are
  // noise). At a few answers an option, a curve still at chance says
  // nothing of the labels.
  const k = targets.options;
  const learned = k === undefined || lastRate <= (1 - 1 / k) / 2 ||
    points[points.length - 1]!.trainAnswers / k >= ANSWERS_PER_OPTION;
  const flat = learned && topRates.every((r) => r >= targets.alpha) &&
    !falling;
  return {
    points: points.map((p, j) => ({
      trainAnswers: p.trainAnswers,
      topRate: topRates[j]!,
    })),
    topShare,
    growth: finite(growth),
    low: finite(Math.min(at(0.1), growth)),
    high: finite(Math.max(at(0.9), growth)),
    flat,
  };
}

/** Indices of the in-scope answers (confidence >= 0), most confident first. */
function confidentFirst(confidences: Float64Array): Int32Array {
  const order = Array.from(confidences, (_, i) => i)
    .filter((i) => confidences[i]! >= 0)
    .sort((a, b) => confidences[b]! - confidences[a]! || a - b);
  return Int32Array.from(order);
}

/**
 * Smoothed disagreement rates of the top shares (`SHARES`), answers
 * weighted by their unit's weight; NaN where the in-scope answers do not
 * reach the share.
 */
function ratesAt(
  order: Int32Array,
  wrong: Uint8Array,
  unitOf: Int32Array,
  weights: Float64Array,
  n: number,
): number[] {
  let total = 0;
  for (let i = 0; i < n; i++) total += weights[unitOf[i]!]!;
  const rates: number[] = [];
  let s = 0;
  let seen = 0;
  let bad = 0;
  for (const i of order) {
    const w = weights[unitOf[i]!]!;
    seen += w;
    bad += w * wrong[i]!;
    while (s < SHARES.length && seen >= SHARES[s]! * total - 1e-9) {
      rates.push((bad + 0.5) / (seen + 1));
      s++;
    }
  }
  while (rates.length < SHARES.length) rates.push(NaN);
  return rates;
}

/** The plain disagreement rate of the `size` most confident in-scope answers (all of them when fewer). */
function topRate(order: Int32Array, wrong: Uint8Array, size: number): number {
  const top = order.subarray(0, Math.min(size, order.length));
  if (top.length === 0) return 1;
  let bad = 0;
  for (const i of top) bad += wrong[i]!;
  return bad / top.length;
}

/**
 * Least squares line through `(xs, ys)`, its slope moved by `z` of its
 * standard errors (from the residuals; none with two points) and then
 * clamped to [-2, 0]; the line still passes through the points' mean.
 */
function fitLine(
  xs: readonly number[],
  ys: readonly number[],
  z = 0,
): { intercept: number; slope: number } {
  const k = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / k;
  const my = ys.reduce((a, b) => a + b, 0) / k;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < k; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my);
    sxx += (xs[i]! - mx) ** 2;
  }
  let slope = sxx === 0 ? 0 : sxy / sxx;
  if (z !== 0 && k > 2 && sxx > 0) {
    let residuals = 0;
    for (let i = 0; i < k; i++) {
      residuals += (ys[i]! - my - slope * (xs[i]! - mx)) ** 2;
    }
    slope += z * Math.sqrt(residuals / (k - 2) / sxx);
  }
  slope = Math.min(0, Math.max(-2, slope));
  return { intercept: my - slope * mx, slope };
}

/** A standard normal draw (Box-Muller). */
function normal(random: () => number): number {
  const u = 1 - random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

/** Units renumbered 0..count-1. */
function denseUnits(units: Int32Array): { of: Int32Array; count: number } {
  const ids = new Map<number, number>();
  const of = new Int32Array(units.length);
  units.forEach((u, i) => {
    let id = ids.get(u);
    if (id === undefined) ids.set(u, id = ids.size);
    of[i] = id;
  });
  return { of, count: ids.size };
}

/** Kish's design effect `n / n_eff` of answers grouped in units (1: all independent). */
function designEffect(unitOf: Int32Array, count: number): number {
  const sizes = new Float64Array(count);
  for (const u of unitOf) sizes[u]!++;
  let squares = 0;
  for (const s of sizes) squares += s * s;
  return unitOf.length === 0 ? 1 : squares / unitOf.length;
}

/** A Poisson(1) draw (Knuth's method: a handful of uniforms). */
function poisson1(random: () => number): number {
  const limit = Math.exp(-1);
  let k = 0;
  let p = random();
  while (p > limit) {
    k++;
    p *= random();
  }
  return k;
}
