/**
 * One pass of a retrain as the learner records it: what `/v1/stats` shows
 * and `DIR/retrains.jsonl` keeps, line by line, so a restart reads its
 * history back (`resume.ts`).
 *
 * @module
 */

import type { RetrainOutcome } from "./retrain.ts";

/** One pass of a retrain, as `/v1/stats` shows it and `DIR/retrains.jsonl` keeps it. */
export interface RetrainRecord extends
  Omit<
    RetrainOutcome,
    "seen" | "encoder" | "tested" | "calibration" | "failures"
  > {
  /** Which retrain it was a pass of (1 for the first; absent in histories written before it was recorded). */
  retrain?: number;
  /** True for a pass that trained with the encoder. */
  encoder?: boolean;
  /** Per question whose calibration test the pass ran, its level (see `RetrainOutcome.tested`). */
  tested?: Record<string, number>;
  /** Per question whose test the pass ran, its calibration answers. */
  calibration?: Record<string, number>;
  /** Per question the pass's bundle left uncalibrated, why (see `RetrainOutcome.failures`). */
  failures?: RetrainOutcome["failures"];
  /** When it started and ended (ISO 8601). */
  started: string;
  ended: string;
  /** Set when the worker failed: its error. */
  error?: string;
}
