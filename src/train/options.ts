/**
 * What training can be told (`TrainOptions`), its defaults, and how the
 * manifest records them (`trainingSettings`).
 *
 * @module
 */

import {
  DEFAULT_DRIFT,
  DEFAULT_FEATURIZER,
  type FeaturizerSettings,
  type ScopeScore,
  type TableSettings,
} from "../engine/mod.ts";
import type { TestGate } from "../guarantee/mod.ts";
import type { CalibrationOutcome, ScoredAnswers } from "./calibrate.ts";
import type { FitSettings, ValidationFigures } from "./fit.ts";
import type { GuardTests, SemanticMode } from "./semantic.ts";
import { DEFAULT_KIND_SCALES } from "./kind_scales.ts";
import type { SplitMode } from "./split.ts";

/** Everything training can be told. */
export interface TrainOptions extends FitSettings {
  alpha: number;
  delta: number;
  /** Share of traces for calibration and for test. */
  calibrationShare: number;
  testShare: number;
  /** Share of the train split held out to choose hyper-parameters and the temperature. */
  validationShare: number;
  /** How traces are split (see `split.ts`). */
  split: SplitMode;
  /** Random split: texts at least this similar (TF-IDF cosine) stay together; 1: only equal texts. */
  similarity: number;
  /** The leakage check counts texts at least this similar (TF-IDF cosine) as near-twins. */
  twinSimilarity: number;
  /** The score the out-of-scope rule judges (see `scope.ts`). */
  scopeScore: ScopeScore;
  featurizer: FeaturizerSettings;
  /** Settings stored in the bundle. */
  settings: TableSettings;
  /**
   * Refit an uncalibrated question on shares of its fit part to advise how
   * many traces would help (see `learning_curve.ts`); advice only, default
   * on (benchmarks turn it off to measure its cost).
   */
  learningCurve?: boolean;
  /**
   * Whether to add a second tier on sentence embeddings (`semantic.ts`):
   * `auto` keeps it where it certifies more on the validation part; it
   * needs the embeddings given to `train`, and without them is off.
   */
  semantic: SemanticMode;
  /**
   * A feedback log's ledger stretches ending at or after this time (ms
   * since the epoch) are left out: feedback on their decisions may still be
   * on its way (the learner sets it; absent, every stretch counts).
   */
  settledBefore?: number;
  /**
   * Per question, a time (ms since the epoch) from which on the traffic is
   * what calibration must stand for (the model began answering options the
   * table lacked): a feedback log's ledger stretches that began earlier,
   * and traces that are no feedback line, only train that question.
   */
  calibrateAfter?: Readonly<Record<string, number>>;
  /**
   * Per question, the level its test is run at instead of `delta` (a
   * learning service spends `delta` across the tests of its retrains:
   * `src/guarantee/spending.ts`); absent for a question: `delta`.
   */
  questionDelta?: Readonly<Record<string, number>>;
  /**
   * Run a question's test only when its plan gives it at least this chance
   * of passing (a learning service keeps the level of a test that would
   * likely fail); absent: every test is run.
   */
  minPassChance?: number;
  /**
   * Per question, run its test only with at least this many calibration
   * answers (a learning service tests a question again once
   * its evidence grew); absent: no floor.
   */
  questionMinCalibration?: Readonly<Record<string, number>>;
  /** The second tier's novelty guard tests (absent: `DEFAULT_GUARD` in `semantic.ts`). */
  semanticGuard?: GuardTests;
  /** Called with a line of progress now and then. */
  progress?: (line: string) => void;
  /** Called with a warning (a refused question); defaults to `progress`. */
  warn?: (line: string) => void;
  /**
   * Called with each question's scored calibration answers, what
   * calibration decided and the validation answers its plan read (for
   * studies of the certification, such as `scripts/bench-plan.ts`);
   * training never reads what it returns.
   */
  onCalibration?: (
    question: string,
    scored: ScoredAnswers,
    outcome: CalibrationOutcome,
    validation: ValidationFigures,
  ) => void;
}

/** Defaults for every training option. */
export const DEFAULT_TRAIN_OPTIONS: TrainOptions = {
  alpha: 0.05,
  delta: 0.05,
  seed: 1,
  calibrationShare: 0.2,
  testShare: 0.05,
  validationShare: 0.15,
  split: "auto",
  similarity: 0.8,
  twinSimilarity: 0.8,
  scopeScore: "spread",
  semantic: "auto",
  featurizer: DEFAULT_FEATURIZER,
  settings: {
    min_radius: 2,
    serve_new_options: false,
    force_thresholds: {},
    drift: DEFAULT_DRIFT,
  },
  l2Grid: [1e-4],
  maxEpochs: 10,
  patience: 1,
  visitBudget: 200_000,
  refitBelow: 50_000,
  learningRate: 0.15,
  wordDropout: 0.2,
  minGradient: 0.02,
  candidates: 16,
  ensemble: 3,
  kindScales: DEFAULT_KIND_SCALES,
  workers: 1,
};

/** What question `name`'s test must clear to be run (see `TrainOptions.minPassChance`). */
export function testGate(options: TrainOptions, name: string): TestGate {
  const minCalibration = options.questionMinCalibration?.[name];
  return {
    ...(options.minPassChance === undefined
      ? {}
      : { minPassChance: options.minPassChance }),
    ...(minCalibration === undefined ? {} : { minCalibration }),
  };
}

/** The level question `name`'s test is run at (see `TrainOptions.questionDelta`). */
export function deltaFor(options: TrainOptions, name: string): number {
  return options.questionDelta?.[name] ?? options.delta;
}

/** How a table was trained, as the manifest's `training` record stores it. */
export type TrainingSettings = {
  seed: number;
  alpha: number;
  delta: number;
  split: SplitMode;
  similarity: number;
  scope_score: ScopeScore;
  shares: { calibration: number; test: number; validation: number };
  learning_rate: number;
  word_dropout: number;
  min_gradient: number;
  candidates: number;
  ensemble: number;
  max_epochs: number;
  patience: number;
  visit_budget: number;
  refit_below: number;
  l2_grid: readonly number[];
  kind_scales: FitSettings["kindScales"];
};

/**
 * How a table was trained, as its manifest stores it: the fit settings
 * and targets (fastText stores its arguments in its model file the same
 * way), so a bundle says what made it.
 */
export function trainingSettings(options: TrainOptions): TrainingSettings {
  return {
    seed: options.seed,
    alpha: options.alpha,
    delta: options.delta,
    split: options.split,
    similarity: options.similarity,
    scope_score: options.scopeScore,
    shares: {
      calibration: options.calibrationShare,
      test: options.testShare,
      validation: options.validationShare,
    },
    learning_rate: options.learningRate,
    word_dropout: options.wordDropout,
    min_gradient: options.minGradient,
    candidates: options.candidates,
    ensemble: options.ensemble,
    max_epochs: options.maxEpochs,
    patience: options.patience,
    visit_budget: options.visitBudget,
    refit_below: options.refitBelow,
    l2_grid: options.l2Grid,
    kind_scales: options.kindScales,
  };
}
