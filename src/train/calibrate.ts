/**
 * The calibrate step: from a fitted question's answers on the calibration
 * split, the certified threshold (see `certify.ts`) and the references the
 * drift guard compares live texts with.
 *
 * @module
 */

import type { Calibration, DriftReference } from "../engine/table.ts";
import {
  candidateGrid,
  chooseThreshold,
  scanStart,
  type ThresholdChoice,
} from "./certify.ts";
import type { ValidationFigures } from "./fit.ts";
import { minimumCertifiable } from "./stats.ts";

/** A question's answers on the calibration split, as serving would score them. */
export interface ScoredAnswers {
  /** Confidence of the best option over all options (0 for an empty text). */
  confidences: Float64Array;
  /** 1 where the best option is not the reference model's answer. */
  wrong: Uint8Array;
  /** Share of each text's buckets no training text had. */
  novelty: Float32Array;
  /** Each text's drift score (see `driftScore`). */
  driftScores: Float32Array;
}

/** What calibration decided, and how. */
export interface CalibrationOutcome {
  calibration: Calibration;
  /** The threshold search, for the report. */
  choice: ThresholdChoice;
  /** What the drift guard compares live texts with (sorted copies). */
  drift: DriftReference;
}

/** Test level and target of the threshold search. */
export interface CalibrationTargets {
  alpha: number;
  delta: number;
}

/**
 * Chooses a question's threshold from its scored calibration answers. The
 * candidate thresholds and where the scan starts come from the validation
 * figures alone, so they are fixed before any calibration label is read.
 */
export function calibrateQuestion(
  scored: ScoredAnswers,
  validation: ValidationFigures,
  targets: CalibrationTargets,
): CalibrationOutcome {
  const { alpha, delta } = targets;
  const n = scored.confidences.length;
  const needed = minimumCertifiable(alpha, delta);
  const start = n === 0 ? 1 : scanStart(
    validation.confidences,
    validation.correct,
    n,
    Math.max(1.5 * needed, 200),
    alpha,
    delta,
  );
  const grid = candidateGrid(validation.confidences, start);
  const choice = chooseThreshold(
    scored.confidences,
    scored.wrong,
    grid,
    alpha,
    delta,
  );
  return {
    calibration: {
      status: choice.threshold === null ? "uncalibrated" : "calibrated",
      threshold: choice.threshold,
      alpha,
      delta,
      reason: choice.reason,
    },
    choice,
    drift: {
      scores: Float32Array.from(scored.driftScores).sort(),
      novelty: Float32Array.from(scored.novelty).sort(),
    },
  };
}
