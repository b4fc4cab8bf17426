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
 * minus the share its test certified. While that price is `FULL_PRICE` or
 * more, the coin picks at `MAX_RATE` (a batch's calibration share: the
 * learner's evidence then grows as fast as a batch's would); as the price
 * falls, so does the rate, down to the service's `--audit-rate` (the base)
 * once the bound costs nothing. A question whose calibration evidence is
 * thin is picked at no less than `base × TARGET_CALIBRATION / n` (at most
 * `THIN_RATE`), as before any price can be read.
 *
 * Each bundle keeps its rates while it is served (its live certificates
 * are built on them), and each picked decision's line keeps the rate that
 * picked it; the coin ignores every text and verdict whatever the rate, so
 * the picks stay a plain random sample of the traffic.
 *
 * @module
 */

import type { Table } from "../engine/mod.ts";
import { bundleInfo } from "../train/mod.ts";

/** Calibration answers a question should reach before the thin-evidence floor falls to the base rate. */
export const TARGET_CALIBRATION = 1000;
/** Highest rate of the thin-evidence floor. */
export const THIN_RATE = 0.1;
/** Highest rate: a batch's calibration share (a fifth), in picks that calibrate (four fifths of them). */
export const MAX_RATE = 0.25;
/** A price of the bound (certified share given up) at which the rate is the highest. */
export const FULL_PRICE = 0.15;

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
 * // No evidence yet: the thin-evidence rate.
 * assert.equal(rateFor({ calibration: 0, certified: 0, open: 0 }, 0.02), 0.1);
 * // 500 answers, certified 250 where 400 were open: the price is 30 points.
 * assert.equal(rateFor({ calibration: 500, certified: 250, open: 400 }, 0.02), 0.25);
 * // 2,000 answers, the bound costs 1.5 points: about a tenth of the way up.
 * assert.ok(Math.abs(rateFor({ calibration: 2000, certified: 1500, open: 1530 }, 0.02) - 0.043) < 1e-9);
 * ```
 */
export function rateFor(e: CalibrationEvidence, base: number): number {
  if (base >= MAX_RATE) return base;
  const thin = e.calibration <= 0 ? THIN_RATE : Math.min(
    THIN_RATE,
    Math.max(base, (base * TARGET_CALIBRATION) / e.calibration),
  );
  const price = e.calibration <= 0
    ? 0
    : Math.max(0, e.open - e.certified) / e.calibration;
  const invest = base + (MAX_RATE - base) * Math.min(1, price / FULL_PRICE);
  return Math.max(base, thin, invest);
}

/**
 * What `table`'s training report says of each question's calibration (the
 * rule it serves: both tiers' when it kept a second tier), for `rateFor`.
 */
export function evidenceOf(table: Table): CalibrationEvidence[] {
  const report = bundleInfo(table).report;
  return table.questions.map((q) => {
    const r = report?.questions?.find((x) => x.name === q.name);
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
