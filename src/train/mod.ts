/**
 * Training, the way in from outside `src/train/` for the names other
 * folders use: the training error, the reports and meters, the binomial
 * tail. Where importing this module would close an import cycle (the
 * command `train`, `bundle/info.ts`) the importer takes the defining module.
 *
 * @module
 */

export { TrainingError } from "./admit.ts";
export { binomialTail } from "./distributions.ts";
export { type LeakageReport } from "./leakage.ts";
export { type Measurement, Meter, percent } from "./meter.ts";
export { type TrainingSettings } from "./options.ts";
export {
  type QuestionReport,
  type SplitReport,
  type TrainReport,
} from "./report.ts";
export { type TrainOptions } from "./options.ts";
export { AUTO_MIN_GROUPS, resolveMode, type SplitMode } from "./split.ts";
export { type SemanticMode } from "./semantic.ts";
export { withoutTimeColumns } from "./time_column.ts";
export {
  type CalibrationOutcome,
  inScopeConfidences,
  type ScoredAnswers,
} from "./calibrate.ts";
