/**
 * The training report (`report.json`): its types, written by the stages of
 * `trainer.ts` and read by `inspect`, `eval` and the HTML report.
 *
 * @module
 */

import type { QuestionAnswers } from "../traces/mod.ts";
import type { CalibrationOutcome, TestFailure } from "./calibrate.ts";
import type { FeedbackSampleFigures } from "./feedback_sample.ts";
import type { FittedModel } from "./fit.ts";
import type { LeakageReport } from "./leakage.ts";
import type { Measurement } from "./meter.ts";
import {
  type TrainingSettings,
  trainingSettings,
  type TrainOptions,
} from "./options.ts";
import type { QuestionParts } from "./parts.ts";
import type { SemanticReport } from "./semantic.ts";
import type { ThinOption } from "./thin_options.ts";
import {
  type FedOption,
  PART_NAMES,
  type ResolvedSplitMode,
  type Split,
} from "./split.ts";

/** How the traces were split, for the report. */
export interface SplitReport {
  mode: ResolvedSplitMode;
  /** Why this mode, in words. */
  reason: string;
  /** Random mode: the similarity at which texts were kept together; null otherwise. */
  similarity: number | null;
  /** Random mode: distinct texts that joined a near-duplicate cluster. */
  similar_links: number;
  /** Per part: traces, and units (groups of traces kept together: texts, clusters or groups). */
  parts: Record<(typeof PART_NAMES)[number], { traces: number; units: number }>;
  /**
   * Time mode: options only the newest traces held, whose oldest traces
   * were pinned to the fit part (see `starvedOptions`); empty otherwise.
   */
  fed_options: FedOption[];
  /**
   * Traces from a service's feedback log (audited, uncertified or
   * client-chosen answers: a biased sample), all kept in the fit part so
   * that none calibrates or tests (see `TraceSet.feedback`). Absent in
   * reports written before it was counted.
   */
  feedback_in_fit?: number;
  /**
   * Per question, what a feedback log's decision ledger made of its lines
   * (see `feedback_sample.ts`): lines of complete censuses (split like any
   * trace), lines of decisions the calibration coin picked (calibration or
   * test only), picks never answered (certified disagreements in
   * calibration), lines that train only, and the stretches read. Absent
   * when no line had a ledger.
   */
  feedback_sample?: Record<string, FeedbackSampleReport>;
}

/** One question's part of `SplitReport.feedback_sample`. */
export interface FeedbackSampleReport {
  census: number;
  held: number;
  missing: number;
  fit_only: number;
  stretches: number;
}

/** One question's part of the training report. */
export interface QuestionReport {
  name: string;
  kind: string;
  options: number;
  /** Options with fewer than `THIN_OPTION` training answers, fewest first. */
  thin_options: ThinOption[];
  answers: {
    train: number;
    validation: number;
    calibration: number;
    test: number;
  };
  model: {
    l2: number;
    epochs: number;
    temperature: number;
    validation_accuracy: number | null;
  };
  calibration: {
    status: string;
    threshold: number | null;
    reason: string | null;
    /** What would help an uncalibrated question, in words; null when calibrated. */
    advice: string | null;
    /** Where the fixed-sequence test started and hedged (coverage of validation answers), and the predicted chance of a pass. */
    start: number;
    hedge: number;
    start_chance: number;
    candidates_tested: number;
    /** For an uncalibrated question, why in one word (see `TestFailure`); null when calibrated (absent in reports before it was recorded). */
    failure?: TestFailure | null;
    /** Calibration answers a threshold with no bound to pay would certify (see `openCount`; absent before it was recorded). */
    open?: number;
    certified: number;
    disagreements: number;
  };
  /** Held-out test figures, measured as serving answers (drift guard's single-text rule included). */
  test: Measurement;
  /** Are calibration answers easier because near-twins sit in the train split? */
  leakage: LeakageReport;
  /** The second tier's stage (absent when training had no embeddings or `--semantic off`). */
  semantic?: SemanticReport;
}

/** The training report (`report.json`). */
export interface TrainReport {
  tool: string;
  alpha: number;
  delta: number;
  seed: number;
  /** How the table was trained (see `trainingSettings`). */
  training: TrainingSettings;
  splits: { calibration: number; test: number; validation: number };
  split: SplitReport;
  traces: number;
  rows: number;
  questions: QuestionReport[];
  /** Questions the traces answer that could not be trained, with the reason. */
  refused: string[];
}

/**
 * The split as the report states it: the parts, the options fed, the
 * feedback lines kept in fit (`fromFeedback`) and what a feedback log's
 * ledger made of its lines (`sample`).
 */
export function splitReport(
  split: Split,
  similarity: number,
  fed: FedOption[],
  fromFeedback: number,
  sample?: ReadonlyMap<string, FeedbackSampleFigures>,
): SplitReport {
  const parts = Object.fromEntries(
    PART_NAMES.map((name, p) => [name, {
      traces: split.traces[p]!,
      units: split.units[p]!,
    }]),
  ) as SplitReport["parts"];
  return {
    mode: split.mode,
    reason: split.reason,
    similarity: split.mode === "random" ? similarity : null,
    similar_links: split.similarLinks,
    parts,
    fed_options: fed,
    feedback_in_fit: fromFeedback,
    ...sampleReport(sample),
  };
}

/** What calibration decided for a question, as the report states it. */
export function calibrationReport(
  outcome: CalibrationOutcome,
): QuestionReport["calibration"] {
  return {
    status: outcome.calibration.status,
    threshold: outcome.calibration.threshold,
    reason: outcome.calibration.reason,
    advice: outcome.advice,
    start: outcome.plan.start,
    hedge: outcome.plan.hedge,
    start_chance: outcome.plan.startChance,
    candidates_tested: outcome.choice.tested,
    failure: outcome.failure,
    open: outcome.open,
    certified: outcome.choice.certified,
    disagreements: outcome.choice.disagreements,
  };
}

/** A question's report before its test part is measured. */
export function questionReport(
  qa: QuestionAnswers,
  parts: QuestionParts,
  thin: ThinOption[],
  model: FittedModel,
  calibration: QuestionReport["calibration"],
  leakage: LeakageReport,
  semantic: SemanticReport | undefined,
): Omit<QuestionReport, "test"> {
  return {
    name: qa.name,
    kind: qa.kind,
    options: qa.options.length,
    thin_options: thin,
    answers: {
      train: parts.fit.length + parts.validation.length,
      validation: parts.validation.length,
      calibration: parts.calibration.length,
      test: parts.test.length,
    },
    model: {
      l2: model.l2,
      epochs: model.epochs,
      temperature: model.temperature,
      validation_accuracy: model.validation.accuracy,
    },
    calibration,
    leakage,
    ...(semantic === undefined ? {} : { semantic }),
  };
}

/** What the whole report is made of, besides the options. */
export interface ReportParts {
  split: Split;
  fed: FedOption[];
  fromFeedback: number;
  /** Per question, what the ledger made of its feedback lines. */
  sample?: ReadonlyMap<string, FeedbackSampleFigures>;
  traces: number;
  rows: number;
  questions: QuestionReport[];
  refused: string[];
}

/** The training report (`report.json`) of a run with `options`. */
export function trainReport(
  options: TrainOptions,
  parts: ReportParts,
): TrainReport {
  return {
    tool: "decision-tables",
    alpha: options.alpha,
    delta: options.delta,
    seed: options.seed,
    training: trainingSettings(options),
    splits: {
      calibration: options.calibrationShare,
      test: options.testShare,
      validation: options.validationShare,
    },
    split: splitReport(
      parts.split,
      options.similarity,
      parts.fed,
      parts.fromFeedback,
      parts.sample,
    ),
    traces: parts.traces,
    rows: parts.rows,
    questions: parts.questions,
    refused: parts.refused,
  };
}

/** `SplitReport.feedback_sample` for `sample`, or nothing when no stretch was read. */
function sampleReport(
  sample: ReadonlyMap<string, FeedbackSampleFigures> | undefined,
): { feedback_sample?: Record<string, FeedbackSampleReport> } {
  if (sample === undefined) return {};
  const out: Record<string, FeedbackSampleReport> = {};
  let any = false;
  for (const [name, f] of sample) {
    if (f.stretches === 0) continue;
    any = true;
    out[name] = {
      census: f.census,
      held: f.held,
      missing: f.missing,
      fit_only: f.fitOnly,
      stretches: f.stretches,
    };
  }
  return any ? { feedback_sample: out } : {};
}
