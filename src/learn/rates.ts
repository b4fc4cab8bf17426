/**
 * The calibration coin's rate per question while a learning service runs:
 * what a pick is worth, paid for while it is worth it.
 *
 * A pick costs one model call when it falls on a certified answer (an
 * audit), and one training label when it falls on an uncertified one (it
 * calibrates instead); it buys calibration evidence, and evidence buys
 * certified answers: the bound's slack shrinks as the evidence grows. So
 * the rate follows the *price of the bound*: the share of its calibration
 * answers a bundle would certify with no bound to pay (the most lenient
 * candidate whose disagreements, as seen, stay within alpha: `openCount`)
 * minus the share its test certified. What one more calibration answer
 * buys falls fast as the answers grow (the slack shrinks as one over their
 * square root, so each answer narrows it by about `1 / (2n)` of it), so
 * the rate the evidence is worth is `base × TARGET_CALIBRATION / n` (at
 * most `MAX_RATE`, a batch's calibration share: with `n` small, the
 * learner's evidence grows as fast as a batch's would): 0.2 at 300
 * answers, 0.06 at 1,000, the base at 3,000 with the default base rate.
 * The price scales it: the full rate while the bound costs `FULL_PRICE`
 * of the certified share or more, the base once it costs nothing (more
 * evidence would buy nothing then).
 *
 * Each bundle keeps its rates while it is served (its live certificates
 * are built on them), and each picked decision's line keeps the rate that
 * picked it; the coin ignores every text and verdict whatever the rate, so
 * the picks stay a plain random sample of the traffic.
 *
 * @module
 */

import type { Table } from "../engine/mod.ts";
import { bundleInfo, questionReportOf } from "../train/mod.ts";

/** Calibration answers at which the rate the evidence is worth falls to the base rate. */
export const TARGET_CALIBRATION = 3000;
/** The rate before any calibration evidence is read (no bundle yet: every decision is asked anyway). */
export const THIN_RATE = 0.1;
/** Highest rate: a batch's calibration share (a fifth), in picks that calibrate (four fifths of them). */
export const MAX_RATE = 0.25;
/** A price of the bound (certified share given up) at which the rate is all the evidence is worth. */
export const FULL_PRICE = 0.1;

/** What a question's last calibration found: its answers, those its test certified, those it would certify with no bound. */
export interface CalibrationEvidence {
  calibration: number;
  certified: number;
  open: number;
}

/**
 * The rate for a question whose calibration found `e` (see the module
 * doc), with the service's base rate `base`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { rateFor } from "./rates.ts";
 * // No evidence yet: the rate before any.
 * assert.equal(rateFor({ calibration: 0, certified: 0, open: 0 }, 0.02), 0.1);
 * // 300 answers, certified 100 where 200 were open: a price of 33 points.
 * assert.ok(Math.abs(rateFor({ calibration: 300, certified: 100, open: 200 }, 0.02) - 0.2) < 1e-9);
 * // 1,000 answers, the bound costs 5 points: half the way to 0.06.
 * assert.ok(Math.abs(rateFor({ calibration: 1000, certified: 600, open: 650 }, 0.02) - 0.04) < 1e-9);
 * // The bound costs nothing: the base rate.
 * assert.equal(rateFor({ calibration: 300, certified: 200, open: 200 }, 0.02), 0.02);
 * ```
 */
export function rateFor(e: CalibrationEvidence, base: number): number {
  if (base >= MAX_RATE) return base;
  if (e.calibration <= 0) return Math.max(base, THIN_RATE);
  const worth = Math.min(
    MAX_RATE,
    Math.max(base, (base * TARGET_CALIBRATION) / e.calibration),
  );
  const price = Math.max(0, e.open - e.certified) / e.calibration;
  return base + (worth - base) * Math.min(1, price / FULL_PRICE);
}

/**
 * What `table`'s training report says of each question's calibration (the
 * rule it serves: both tiers' when it kept a second tier), for `rateFor`.
 */
export function evidenceOf(table: Table): CalibrationEvidence[] {
  const info = bundleInfo(table);
  return table.questions.map((q) => {
    const r = questionReportOf(info, q.name);
    const calibration = r?.answers?.calibration ?? 0;
    const tiers = r?.semantic?.calibration;
    if (tiers !== undefined && tiers !== null) {
      return {
        calibration,
        certified: tiers.threshold === null
          ? 0
          : tiers.by_table + tiers.by_semantic,
        open: tiers.open ?? 0,
      };
    }
    const c = r?.calibration;
    return {
      calibration,
      certified: c?.threshold === null || c === undefined ? 0 : c.certified,
      open: c?.open ?? 0,
    };
  });
}

/** Each question's rate for `table`, from its training report (see the module doc). */
export function ratesOf(table: Table, base: number): number[] {
  return evidenceOf(table).map((e) => rateFor(e, base));
}
