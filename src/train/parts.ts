/**
 * The split stage of training: the traces split once into fit, validation,
 * calibration and test parts (see `split.ts`), with a time split's starved
 * options fed, and each question's traces by part.
 *
 * @module
 */

import type { QuestionAnswers, TraceSet } from "../traces/mod.ts";
import { type FeedbackSample, feedbackSample } from "./feedback_sample.ts";
import type { TrainOptions } from "./options.ts";
import {
  type FedOption,
  FIT_ONLY,
  type Split,
  type SplitOptions,
  splitTraces,
  starvedOptions,
} from "./split.ts";

/** What the split stage gives the next ones. */
export interface SplitOutcome {
  split: Split;
  /** Time split: options whose oldest traces were pinned to the fit part. */
  fed: FedOption[];
  /** Traces from a feedback log that train only (no sample of the traffic). */
  fromFeedback: number;
  /** Where the feedback log's lines stand, and the unanswered picks per question. */
  sample: FeedbackSample;
}

/**
 * Splits `traces` as the options ask. A feedback log's lines are mostly no
 * sample of the traffic: they train, and calibration and test are left to
 * the other traces; but the decisions the calibration coin picked (read
 * from the log's ledger) calibrate or test only, and the lines of a
 * complete census split like any trace (see `feedback_sample.ts`). In a
 * time split, options only the newest traces hold train
 * on their oldest ones; the parts they leave fill up with the next newest
 * traces, which may starve the options of the month before: again, until
 * none starves (at most 20 rounds).
 */
export function splitStage(
  traces: TraceSet,
  trainable: readonly QuestionAnswers[],
  options: TrainOptions,
): SplitOutcome {
  const splitOptions: SplitOptions = {
    mode: options.split,
    calibration: options.calibrationShare,
    test: options.testShare,
    validation: options.validationShare,
    seed: options.seed,
    similarity: options.similarity,
  };
  const sample = feedbackSample(
    traces,
    trainable,
    options.settledBefore,
    options.calibrateAfter,
  );
  let fromFeedback = 0;
  for (const o of sample.outside) if (o === FIT_ONLY) fromFeedback++;
  if (sample.outside.some((o) => o !== 0)) {
    splitOptions.outside = sample.outside;
  }
  let split = splitTraces(traces, splitOptions);
  const fed: FedOption[] = [];
  for (let round = 0; split.mode === "time" && round < 20; round++) {
    const starved = starvedOptions(
      split,
      trainable,
      traces.times!,
      1 - options.calibrationShare - options.testShare,
      splitOptions.pinned,
    );
    if (starved.fed.length === 0) break;
    fed.push(...starved.fed);
    splitOptions.pinned = starved.pinned;
    split = splitTraces(traces, splitOptions);
  }
  return { split, fed, fromFeedback, sample };
}

/** A question's traces, by part. */
export interface QuestionParts {
  fit: number[];
  validation: number[];
  calibration: number[];
  test: number[];
}

/** The traces that answer a question (label >= 0), by part. */
export function questionParts(
  labels: Int32Array,
  parts: Uint8Array,
): QuestionParts {
  const out: QuestionParts = {
    fit: [],
    validation: [],
    calibration: [],
    test: [],
  };
  const byPart = [out.fit, out.validation, out.calibration, out.test];
  for (let i = 0; i < labels.length; i++) {
    if (labels[i]! >= 0) byPart[parts[i]!]!.push(i);
  }
  return out;
}
