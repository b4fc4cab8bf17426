/**
 * The calibration coin's rate per question while a learning service runs:
 * higher while a question's calibration evidence is thin, the service's
 * `--audit-rate` once it is large. A retrain's report says how many
 * calibration answers each question had; with `n` of them the rate is
 * `base × TARGET_CALIBRATION / n`, at least `base` and at most `MAX_RATE`.
 * Each bundle keeps its rates while it is served (its live certificates
 * are built on them), and each picked decision's line keeps the rate that
 * picked it.
 *
 * @module
 */

import type { Table } from "../engine/mod.ts";
import { bundleInfo } from "../train/mod.ts";

/** Calibration answers a question should reach before the rate falls to the base rate. */
export const TARGET_CALIBRATION = 1000;
/** Highest rate. */
export const MAX_RATE = 0.1;

/**
 * The rate for a question with `calibration` answers (see the module doc).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { rateFor } from "./rates.ts";
 * assert.equal(rateFor(0, 0.02), 0.1);
 * assert.equal(rateFor(500, 0.02), 0.04);
 * assert.equal(rateFor(10_000, 0.02), 0.02);
 * ```
 */
export function rateFor(calibration: number, base: number): number {
  if (base >= MAX_RATE) return base;
  const wanted = calibration <= 0
    ? MAX_RATE
    : base * TARGET_CALIBRATION / calibration;
  return Math.min(MAX_RATE, Math.max(base, wanted));
}

/** Each question's rate for `table`, from its training report's calibration part (see the module doc). */
export function ratesOf(table: Table, base: number): number[] {
  const report = bundleInfo(table).report;
  return table.questions.map((q) => {
    const r = report?.questions?.find((x) => x.name === q.name);
    return rateFor(r?.answers?.calibration ?? 0, base);
  });
}
