/**
 * Training, the way in from outside `src/train/`: a whole run as one call
 * (`trainBundle`, then `writeTrainedBundle`), the options (checked by
 * `trainOptions`, read back from a bundle by `trainOptionsOf`), the
 * training error, the reports and meters, the binomial tail. Where
 * importing this module would close an import cycle (inside `src/train/`)
 * the importer takes the defining module.
 *
 * @module
 */

export { TrainingError } from "./admit.ts";
export { type TrainResult } from "./contents.ts";
export { type EmbedProgress, embedSample, embedTraces } from "./embed.ts";
export { SEMANTIC_SAMPLE_MAX } from "./semantic_sample.ts";
export {
  trainBundle,
  type TrainBundleOptions,
  type TrainedBundle,
  trainOptionsOf,
  writeTrainedBundle,
} from "./train_bundle.ts";
export { train } from "./trainer.ts";
export {
  TrainOptionError,
  trainOptions,
  type TrainOptionsInput,
} from "./validate_options.ts";
export { adviceInBrief, uncalibratedSummary } from "./refusal.ts";
export {
  type BundleInfo,
  bundleInfo,
  questionReportOf,
  type StoredQuestionReport,
  type StoredReport,
} from "./bundle_info.ts";
export { type LeakageReport } from "./leakage.ts";
export { type Measurement, Meter } from "./meter.ts";
export { percent } from "../format.ts";
export { type TrainingSettings } from "./options.ts";
export {
  type QuestionReport,
  type SplitReport,
  type TrainReport,
} from "./report.ts";
export { type TrainOptions } from "./options.ts";
export {
  AUTO_MIN_GROUPS,
  resolveMode,
  type SplitMode,
  TEST as TEST_PART,
} from "./split.ts";
export { type SemanticMode } from "./semantic.ts";
export { sampleInWords, splitInWords } from "./split_words.ts";
export { withoutTimeColumns } from "./time_column.ts";
export {
  type CalibrationOutcome,
  inScopeConfidences,
  type ScoredAnswers,
  type TestFailure,
} from "./calibrate.ts";
