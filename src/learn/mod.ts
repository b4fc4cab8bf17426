/**
 * A service that learns from its own feedback, the way in from outside
 * `src/learn/`: the `Learner` (labels counted, questions and options not
 * learned yet, retrains in a worker on the evidence's schedule, the bundle
 * swapped in when it certifies more), the calibration coin's rates per
 * question (`ratesOf`) and the files a learning service keeps in its
 * folder. The worker (`retrain_worker.ts`) is started by URL, never
 * imported. A fleet that learns through its store has its own door,
 * `fleet/mod.ts`.
 *
 * @module
 */

export {
  Learner,
  type LearnerOptions,
  MIN_PASS_CHANCE,
  RETEST_GROWTH,
  RETEST_LABELS,
  SETTLE_MS,
  type StretchPoint,
} from "./learner.ts";
export {
  LabelNeeds,
  LabelPace,
  labelsNeeded,
  needInWords,
  type QuestionNeed,
} from "./advice.ts";
export { QuestionRegistry } from "./questions.ts";
export { type RetrainRecord } from "./record.ts";
export { type LearnerResume, readResume } from "./resume.ts";
export {
  type CalibrationEvidence,
  evidenceOf,
  FULL_PRICE,
  MAX_RATE,
  rateFor,
  ratesOf,
  TARGET_CALIBRATION,
  THIN_RATE,
} from "./rates.ts";
export {
  LEARN_FILES,
  QUICK_SHARE,
  type RetrainJob,
  type RetrainOutcome,
  retrainPasses,
} from "./retrain.ts";
export {
  EMBED_AHEAD_LABELS,
  EMBED_AHEAD_PAUSE_MS,
  embedAheadDue,
  FIRST_LABELS,
  GROWTH,
  nextRetrainLabels,
  pauseAfter,
  retrainDue,
} from "./schedule.ts";
