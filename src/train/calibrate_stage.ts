/**
 * The calibrate stage of training, per question: the fitted model as the
 * engine will serve it, its calibration answers scored through the
 * engine's one entry point, the certified threshold (`calibrate.ts`) and
 * the leakage check (`leakage.ts`).
 *
 * @module
 */

import { type QuestionTable, scopeApplies, type Table } from "../engine/mod.ts";
import type { QuestionAnswers } from "../traces/mod.ts";
import {
  calibrateQuestion,
  type CalibrationOutcome,
  type ScoredAnswers,
} from "./calibrate.ts";
import type { FittedModel } from "./fit.ts";
import { computeGainBounds } from "./gain_bounds.ts";
import { leakageCheck, type LeakageReport } from "./leakage.ts";
import { deltaFor, testGate, type TrainOptions } from "./options.ts";
import type { QuestionParts } from "./parts.ts";
import { scoreAnswers } from "./score.ts";
import type { Split } from "./split.ts";

/** A question calibrated: what the next stages read. */
export interface CalibratedQuestion {
  /** The question as served before calibration (the second tier scores with it). */
  unscored: QuestionTable;
  /** The question with its calibration and drift reference. */
  question: QuestionTable;
  /**
   * Its calibration answers as the table scores them: the calibration
   * part's, then the picked decisions never answered (`rows`), each a
   * disagreement.
   */
  scored: ScoredAnswers;
  /** The rows `scored` holds, in order: the calibration part, then the unanswered picks. */
  rows: readonly number[];
  outcome: CalibrationOutcome;
  leakage: LeakageReport;
  /** Calibration answers counted as certified disagreements (unanswered picks of a feedback log). */
  worstCase: number;
}

/** What the calibrate stage reads besides the question. */
export interface CalibrateInput {
  base: Table;
  rowKinds: Uint8Array;
  texts: readonly string[];
  split: Split;
  /** Per trace, the flags of `calibrationTwins`. */
  twins: Uint8Array;
  /** Per question, the decisions picked for calibration that were never answered, without their text (see `feedback_sample.ts`). */
  missing?: ReadonlyMap<string, { missing: number }>;
  /** Per question, the rows of picked decisions never answered whose text the log kept. */
  unanswered?: ReadonlyMap<string, readonly number[]>;
}

/**
 * Calibrates one fitted question on its calibration part; warns (through
 * `warn`) when the leakage check finds calibration answers easier for
 * near-twins in the train split.
 */
export function calibrateStage(
  input: CalibrateInput,
  qa: QuestionAnswers,
  parts: QuestionParts,
  model: FittedModel,
  options: TrainOptions,
  warn: (line: string) => void,
): CalibratedQuestion {
  const unscored = servedQuestion(qa, model, input.rowKinds, options);
  // A pick never answered is a disagreement wherever it would be certified.
  const unanswered = input.unanswered?.get(qa.name) ?? [];
  const rows = [...parts.calibration, ...unanswered];
  const scored = scoreAnswers(
    input.base,
    unscored,
    qa.labels,
    input.texts,
    rows,
  );
  for (let t = parts.calibration.length; t < rows.length; t++) {
    scored.wrong[t] = 1;
  }
  scored.unlabelled = unanswered.length;
  scored.units = Int32Array.from(rows, (i) => input.split.unitOf[i]!);
  scored.traces = rows;
  const worstCase = input.missing?.get(qa.name)?.missing ?? 0;
  const outcome = calibrateQuestion(scored, model.validation, {
    ...options,
    delta: deltaFor(options, qa.name),
    scopeP: options.settings.drift.scope_p,
    worstCase,
    gate: testGate(options, qa.name),
  });
  options.onCalibration?.(qa.name, scored, outcome, model.validation);
  const leakage = leakageCheck(
    parts.calibration,
    scored.wrong,
    input.twins,
    options.twinSimilarity,
  );
  if (leakage.warning !== null) {
    warn(`question "${qa.name}": ${leakage.warning}`);
  }
  const question: QuestionTable = {
    ...unscored,
    calibration: outcome.calibration,
    drift: outcome.drift,
  };
  return { unscored, question, scored, rows, outcome, leakage, worstCase };
}

/** The question as it will be served, before calibration. */
function servedQuestion(
  qa: QuestionAnswers,
  model: FittedModel,
  rowKinds: Uint8Array,
  options: TrainOptions,
): QuestionTable {
  const gains = computeGainBounds(
    model.weights,
    qa.options.length,
    rowKinds,
    options.featurizer.ngram_average_min,
  );
  return {
    name: qa.name,
    kind: qa.kind,
    options: qa.options,
    weights: model.weights,
    bias: model.bias,
    temperature: model.temperature,
    calibration: {
      status: "uncalibrated",
      threshold: null,
      alpha: options.alpha,
      delta: deltaFor(options, qa.name),
      reason: null,
      candidates: [],
    },
    wordGain: gains.wordGain,
    bigramGain: gains.bigramGain,
    drift: {
      scores: new Float32Array(0),
      novelty: new Float32Array(0),
      scope: {
        score: scopeApplies(qa.options.length) ? options.scopeScore : null,
        values: new Float32Array(0),
      },
    },
    optionIndex: new Map(qa.options.map((o, i) => [o, i])),
  };
}
