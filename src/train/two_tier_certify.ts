/**
 * The two-tier rule certified as one (see `twoTierVerdict` in the
 * engine): its Learn-then-Test over the threshold `L` on the calibration
 * part, planned from the validation part (`certifyTwoTiers`), what the rule
 * certifies at each candidate (`twoTierCounts`), and how much a rule can
 * certify at all, the plain guide `auto` compares (`ruleCertified`).
 *
 * @module
 */

import { twoTierVerdict } from "../engine/mod.ts";
import {
  candidateGrid,
  type CertificationPlan,
  fixedSequence,
  type GridCount,
  largestPassing,
  notTested,
  openCount,
  planCertification,
  type TestGate,
  type ThresholdChoice,
  worthTesting,
} from "../guarantee/mod.ts";
import { withWorstCases } from "./calibrate.ts";
import { effectiveSize } from "./union_find.ts";

/** Validation answers of both tiers (fit-only models), in the same order. */
export interface TwoTierValidation {
  table: { confidences: Float64Array; correct: Uint8Array };
  tier: { confidences: Float64Array; correct: Uint8Array };
}

/** Calibration answers of both tiers as served (confidence -1: withheld), in the same order. */
export interface TwoTierCalibration {
  tableConf: Float64Array;
  tableWrong: Uint8Array;
  tierConf: Float64Array;
  tierWrong: Uint8Array;
  units?: Int32Array;
}

/** Both tiers' calibration answers with `k` worst cases (see `withWorstCases`) added to each. */
export function withWorstTiers(
  c: TwoTierCalibration,
  k: number,
): TwoTierCalibration {
  if (k === 0) return c;
  const table = withWorstCases({
    confidences: c.tableConf,
    wrong: c.tableWrong,
    ...(c.units === undefined ? {} : { units: c.units }),
  }, k);
  const tier = withWorstCases(
    { confidences: c.tierConf, wrong: c.tierWrong },
    k,
  );
  return {
    tableConf: table.confidences,
    tableWrong: table.wrong,
    tierConf: tier.confidences,
    tierWrong: tier.wrong,
    ...(table.units === undefined ? {} : { units: table.units }),
  };
}

/**
 * The two-tier rule's Learn-then-Test: the plan (`planCertification`)
 * from validation answers only (each at the stronger tier's confidence,
 * judged by the tier that would answer there) and the calibration size,
 * then the fixed sequence with fallback over the plan's grid on what the
 * rule certifies at each candidate (`twoTierCounts`). With probability at
 * least `1 - delta`, the answers the rule certifies at the chosen
 * threshold disagree at most `alpha` of the time (exchangeable
 * calibration and serving texts).
 */
export function certifyTwoTiers(
  validation: TwoTierValidation,
  calibration: TwoTierCalibration,
  alpha: number,
  delta: number,
  gate: TestGate = {},
): { plan: CertificationPlan; choice: ThresholdChoice; open: number } {
  const v = validation.table.confidences.length;
  const both = { confidences: new Float64Array(v), correct: new Uint8Array(v) };
  for (let t = 0; t < v; t++) {
    const tc = validation.table.confidences[t]!;
    const sc = validation.tier.confidences[t] ?? -1;
    const byTable = tc >= sc;
    both.confidences[t] = byTable ? tc : sc;
    both.correct[t] = byTable
      ? validation.table.correct[t]!
      : validation.tier.correct[t]!;
  }
  const n = calibration.tableConf.length;
  const { units } = calibration;
  const size = units === undefined ? n : effectiveSize(units);
  const plan = planCertification(both, size, alpha, delta);
  const counts = twoTierCounts(
    plan.grid,
    calibration.tableConf,
    calibration.tableWrong,
    calibration.tierConf,
    calibration.tierWrong,
    units,
  );
  return {
    plan,
    choice: worthTesting(plan, n, gate)
      ? fixedSequence(plan, counts, alpha, n)
      : notTested(plan, n, gate),
    open: openCount(counts, alpha),
  };
}

/**
 * What the two-tier rule certifies at each candidate threshold: per
 * answer, the table's answer where its confidence reaches the candidate,
 * else the second tier's where its confidence does (confidence -1:
 * withheld), counted as `fallbackTest` counts (Kish's effective number by
 * unit).
 */
export function twoTierCounts(
  grid: readonly number[],
  tableConf: Float64Array,
  tableWrong: Uint8Array,
  tierConf: Float64Array,
  tierWrong: Uint8Array,
  units?: Int32Array,
): GridCount[] {
  const n = tableConf.length;
  return grid.map((threshold) => {
    let count = 0;
    let k = 0;
    const perUnit = new Map<number, number>();
    let squares = 0;
    for (let t = 0; t < n; t++) {
      const who = twoTierVerdict({
        table: tableConf[t]!,
        semantic: tierConf[t]!,
      }, threshold);
      if (who === null) continue;
      count++;
      k += who === "table" ? tableWrong[t]! : tierWrong[t]!;
      if (units !== undefined) {
        const before = perUnit.get(units[t]!) ?? 0;
        perUnit.set(units[t]!, before + 1);
        squares += 2 * before + 1;
      }
    }
    const effective = units === undefined || count === 0
      ? count
      : (count * count) / squares;
    return { n: count, k, effective };
  });
}

/**
 * The largest share of validation answers the two-tier rule (or the table
 * alone, without `tier`) certifies at a threshold where their
 * disagreements would pass the binomial test at `delta`: a plain guide to
 * how much a rule can certify, for `auto`; 0 when no threshold would.
 */
export function ruleCertified(
  tableConf: Float64Array,
  tableCorrect: Uint8Array,
  tier: { confidences: Float64Array; correct: Uint8Array } | null,
  targets: { alpha: number; delta: number },
): number {
  const n = tableConf.length;
  if (n === 0) return 0;
  const tierConf = tier?.confidences ?? new Float64Array(n).fill(-1);
  const all = new Float64Array(2 * n);
  all.set(tableConf);
  all.set(tierConf, n);
  const grid = candidateGrid(all.filter((c) => c >= 0), 0, 400);
  const counts = twoTierCounts(
    grid,
    tableConf,
    tableCorrect.map((c) => 1 - c),
    tierConf,
    tier?.correct.map((c) => 1 - c) ?? new Uint8Array(n),
  );
  let best = 0;
  for (const c of counts) {
    if (
      c.n > best && largestPassing(c.n, targets.alpha, targets.delta) >= c.k
    ) {
      best = c.n;
    }
  }
  return best / n;
}
