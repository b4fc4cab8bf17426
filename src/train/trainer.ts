/**
 * Training a table from traces: split, featurise, then per question fit,
 * calibrate and measure.
 *
 * The traces are split once (see `split.ts`) into fit, validation,
 * calibration and test parts; each question uses the traces that answer it.
 * The fit step (`fit.ts`) chooses hyper-parameters and the temperature on
 * validation and fits the weights on fit and validation; the calibrate step
 * (`calibrate.ts`) picks the certified threshold on calibration; the test
 * part is answered exactly as serving would and measured (`meter.ts`), for
 * the report only.
 *
 * @module
 */

import {
  DEFAULT_FEATURIZER,
  type FeaturizerSettings,
} from "../engine/features.ts";
import { assess, prepareText } from "../engine/answer.ts";
import { DEFAULT_DRIFT, QUIET_GUARD } from "../engine/drift.ts";
import { computeGainBounds } from "../engine/radius.ts";
import { scopeApplies, type ScopeScore } from "../engine/scope.ts";
import type { QuestionTable, Table, TableSettings } from "../engine/table.ts";
import { setThresholdInForce, TableState } from "../engine/state.ts";
import type { BundleContents } from "../bundle/codec.ts";
import { TOOL_VERSION } from "../version.ts";
import {
  adviceWith,
  calibrateQuestion,
  type CalibrationOutcome,
  type ScoredAnswers,
} from "./calibrate.ts";
import { curveInWords, learningCurves } from "./learning_curve.ts";
import {
  calibrationTwins,
  leakageCheck,
  type LeakageReport,
} from "./leakage.ts";
import { buildCorpus, tableRows, trainingLayout } from "./corpus.ts";
import {
  fitQuestions,
  type FitSettings,
  type FitTable,
  type FittedModel,
} from "./fit.ts";
import { type Measurement, Meter } from "./meter.ts";
import { DEFAULT_KIND_SCALES } from "./sparse.ts";
import {
  type FedOption,
  isTrain,
  PART_NAMES,
  type ResolvedSplitMode,
  type Split,
  type SplitMode,
  type SplitOptions,
  splitTraces,
  starvedOptions,
} from "./split.ts";
import { minimumCertifiable } from "./stats.ts";
import type { QuestionAnswers, TraceSet } from "../traces/mod.ts";
import { disagrees } from "../engine/verdict.ts";
import {
  type GuardTests,
  NOVELTY_P,
  semanticFitSettings,
  type SemanticMode,
  type SemanticReport,
  semanticStage,
} from "./semantic.ts";
import { fullProbabilities, semanticAssess } from "../engine/semantic.ts";

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
  /** The second tier's novelty guard tests (absent: `DEFAULT_GUARD` in `semantic.ts`). */
  semanticGuard?: GuardTests;
  /** Called with a line of progress now and then. */
  progress?: (line: string) => void;
  /** Called with a warning (a refused question); defaults to `progress`. */
  warn?: (line: string) => void;
  /**
   * Called with each question's scored calibration answers and what
   * calibration decided (for studies of the certification, such as
   * `scripts/bench-plan.ts`); training never reads what it returns.
   */
  onCalibration?: (
    question: string,
    scored: ScoredAnswers,
    outcome: CalibrationOutcome,
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
}

/** Fewest training answers (fit and validation) an option should have; fewer earns a warning. */
export const THIN_OPTION = 10;

/** An option with few training answers. */
export interface ThinOption {
  option: string;
  /** Its training answers (fit and validation). */
  answers: number;
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
  training: Record<string, unknown>;
  splits: { calibration: number; test: number; validation: number };
  split: SplitReport;
  traces: number;
  rows: number;
  questions: QuestionReport[];
  /** Questions the traces answer that could not be trained, with the reason. */
  refused: string[];
}

/** A trained table, its row buckets and its report. */
export interface TrainResult {
  table: Table;
  rowBuckets: Int32Array;
  report: TrainReport;
}

/**
 * How a table was trained, as its manifest stores it: the fit settings
 * and targets (fastText stores its arguments in its model file the same
 * way), so a bundle says what made it.
 */
export function trainingSettings(
  options: TrainOptions,
): Record<string, unknown> {
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

/** The bundle files' contents for a training result. */
export function trainedContents(r: TrainResult): BundleContents {
  return {
    featurizer: r.table.featurizer,
    settings: r.table.settings,
    toolVersion: TOOL_VERSION,
    rowBuckets: r.rowBuckets,
    questions: r.table.questions,
    training: r.report.training,
    models: r.report.questions.map((q) => ({
      l2: q.model.l2,
      epochs: q.model.epochs,
    })),
    report: r.report,
  };
}

/** Training that cannot go on (no question can be trained). */
export class TrainingError extends Error {
  override name = "TrainingError";
}

/** A question's traces, by part. */
interface QuestionParts {
  fit: number[];
  validation: number[];
  calibration: number[];
  test: number[];
}

/** A question fitted and calibrated, waiting to be measured. */
interface FittedQuestion {
  qa: QuestionAnswers;
  parts: QuestionParts;
  question: QuestionTable;
  /** Its calibration answers as the table scores them. */
  scored: ScoredAnswers;
  report: Omit<QuestionReport, "test">;
}

/**
 * Trains every question of `traces`. Deterministic for `options.seed`.
 * With `embeddings` (one per trace, from `src/encoder/`) and
 * `options.semantic` not `off`, each question may get a second tier.
 */
export function train(
  traces: TraceSet,
  options: TrainOptions,
  embeddings?: readonly Float32Array[],
): TrainResult {
  if (embeddings !== undefined && embeddings.length !== traces.texts.length) {
    throw new RangeError(
      `Expected one embedding per trace (${traces.texts.length}): got ${embeddings.length}`,
    );
  }
  const semantic = embeddings !== undefined && options.semantic !== "off"
    ? options.semantic
    : "off";
  const say = options.progress ?? (() => {});
  const { texts } = traces;
  const needed = minimumCertifiable(options.alpha, options.delta);
  const minimumAnswers = Math.ceil(needed / options.calibrationShare);
  // Questions that cannot be trained and certified are refused, each with
  // its reason; training goes on with the others, and fails when none is left.
  const refusals: string[] = [];
  const trainable = traces.questions.filter((q) => {
    const reason = refusal(q, minimumAnswers, needed, options);
    if (reason !== null) refusals.push(reason);
    return reason === null;
  });
  if (trainable.length === 0) throw new TrainingError(refusals.join("; "));
  for (const reason of refusals) (options.warn ?? say)(`refused ${reason}`);

  say(`splitting ${texts.length} traces`);
  const splitOptions: SplitOptions = {
    mode: options.split,
    calibration: options.calibrationShare,
    test: options.testShare,
    validation: options.validationShare,
    seed: options.seed,
    similarity: options.similarity,
  };
  // A feedback log's lines are no sample of the traffic: they train, and
  // calibration and test are left to the other traces.
  const fromFeedback = countOnes(traces.feedback);
  if (fromFeedback > 0) splitOptions.pinned = Uint8Array.from(traces.feedback!);
  let split = splitTraces(traces, splitOptions);
  const fed: FedOption[] = [];
  // Options only the newest traces hold train on their oldest ones; the
  // parts they leave fill up with the next newest traces, which may starve
  // the options of the month before: again, until none starves.
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
  say(`split: ${describeSplit(split)}`);
  if (fed.length > 0) (options.warn ?? say)(fedInWords(fed));

  say(`featurising ${texts.length} texts`);
  const corpus = buildCorpus(texts, options.featurizer, say);
  const { rowOf, rowBuckets, rowKinds } = tableRows(
    corpus,
    (i) => isTrain(split.parts[i]!),
    options.featurizer,
  );
  const layout = trainingLayout(
    corpus,
    rowOf,
    options.featurizer.ngram_average_min,
    options.kindScales,
  );
  const base: Table = {
    featurizer: options.featurizer,
    settings: options.settings,
    rowOf,
    rowCount: rowBuckets.length,
    questions: [],
    byName: new Map(),
    info: {},
  };

  say("checking calibration texts for near-twins in the train split");
  const twins = calibrationTwins(texts, split.parts, options.twinSimilarity);

  const partsOf = trainable.map((qa) => questionParts(qa.labels, split.parts));
  const thin = trainable.map((qa, q) => thinOptions(qa, partsOf[q]!));
  thin.forEach((options_, q) => {
    if (options_.length > 0) {
      (options.warn ?? say)(thinInWords(trainable[q]!.name, options_));
    }
  });
  say(
    `training ${
      trainable.map((qa) => `"${qa.name}" (${qa.options.length} options)`)
        .join(", ")
    } on ${options.workers} ${options.workers === 1 ? "thread" : "workers"}`,
  );
  const models = fitQuestions(
    { layout, rows: rowBuckets.length, rowKinds },
    trainable.map((qa, q) => ({
      name: qa.name,
      labels: qa.labels,
      fit: partsOf[q]!.fit,
      validation: partsOf[q]!.validation,
      options: qa.options.length,
    })),
    options,
    say,
  );
  say("fitted; calibrating and measuring");
  const fitted: FittedQuestion[] = [];
  for (const [q, qa] of trainable.entries()) {
    const parts = partsOf[q]!;
    const model = models[q]!;
    const gains = computeGainBounds(
      model.weights,
      qa.options.length,
      rowKinds,
      options.featurizer.ngram_average_min,
    );
    // The question as it will be served, before calibration: the engine
    // scores the calibration texts through its one entry point.
    const unscored: QuestionTable = {
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
        delta: options.delta,
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
    const scored = scoreAnswers(
      base,
      unscored,
      qa.labels,
      texts,
      parts.calibration,
    );
    scored.units = Int32Array.from(parts.calibration, (i) => split.unitOf[i]!);
    scored.traces = parts.calibration;
    const outcome = calibrateQuestion(scored, model.validation, {
      ...options,
      scopeP: options.settings.drift.scope_p,
    });
    options.onCalibration?.(qa.name, scored, outcome);
    const leakage = leakageCheck(
      parts.calibration,
      scored.wrong,
      twins,
      options.twinSimilarity,
    );
    if (leakage.warning !== null) {
      (options.warn ?? say)(`question "${qa.name}": ${leakage.warning}`);
    }
    const question: QuestionTable = {
      ...unscored,
      calibration: outcome.calibration,
      drift: outcome.drift,
    };
    let semanticReport: SemanticReport | undefined;
    if (semantic !== "off") {
      const calibrationTable: Table = {
        ...base,
        questions: [unscored],
        byName: new Map([[unscored.name, unscored]]),
      };
      const calibrationState = new TableState(calibrationTable);
      const stage = semanticStage(
        {
          labels: qa.labels,
          options: qa.options.length,
          fit: parts.fit,
          validation: parts.validation,
          calibration: parts.calibration,
          tableValidation: model.validation,
          tableTemperature: model.temperature,
          scored,
          tableProbabilities: parts.calibration.map((i) =>
            fullProbabilities(
              calibrationTable,
              calibrationState,
              prepareText(calibrationTable, calibrationState, texts[i]!),
              unscored,
            )
          ),
          tableOutcome: outcome,
        },
        embeddings!,
        {
          mode: semantic,
          alpha: options.alpha,
          delta: options.delta,
          scopeP: options.settings.drift.scope_p,
          fit: semanticFitSettings(options.seed),
          noveltyP: NOVELTY_P,
          readTable: true,
          ...(options.semanticGuard ? { guard: options.semanticGuard } : {}),
        },
      );
      semanticReport = stage.report;
      say(
        `question "${qa.name}": second tier ${
          stage.report.used ? "kept" : "left out"
        }: ${stage.report.reason}`,
      );
      if (stage.tier !== null) question.semantic = stage.tier;
    }
    fitted.push({
      qa,
      parts,
      question,
      scored,
      report: {
        name: qa.name,
        kind: qa.kind,
        options: qa.options.length,
        thin_options: thin[q]!,
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
        calibration: {
          status: outcome.calibration.status,
          threshold: outcome.calibration.threshold,
          reason: outcome.calibration.reason,
          advice: outcome.advice,
          start: outcome.plan.start,
          hedge: outcome.plan.hedge,
          start_chance: outcome.plan.startChance,
          candidates_tested: outcome.choice.tested,
          certified: outcome.choice.certified,
          disagreements: outcome.choice.disagreements,
        },
        leakage,
        ...(semanticReport === undefined ? {} : { semantic: semanticReport }),
      },
    });
  }

  curveAdvice(
    fitted,
    { layout, rows: rowBuckets.length, rowKinds },
    options,
    (f, model) =>
      scoreAnswers(
        base,
        {
          ...f.question,
          weights: model.weights,
          bias: model.bias,
          temperature: model.temperature,
        },
        f.qa.labels,
        texts,
        f.parts.calibration,
      ),
  );
  for (const f of fitted) {
    const c = f.report.calibration;
    if (c.advice === null) continue;
    (options.warn ?? say)(
      `question "${f.qa.name}" is uncalibrated (${c.reason}): ${c.advice}`,
    );
  }

  const questions = fitted.map((f) => f.question);
  const table: Table = {
    ...base,
    questions,
    byName: new Map(questions.map((q) => [q.name, q])),
  };
  const state = new TableState(table);
  const reports: QuestionReport[] = fitted.map((f) => ({
    ...f.report,
    test: measureAnswers(
      table,
      state,
      f.qa,
      texts,
      f.parts.test,
      embeddings,
    ),
  }));
  const report: TrainReport = {
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
    split: {
      ...splitReport(split, options.similarity, fed),
      feedback_in_fit: fromFeedback,
    },
    traces: texts.length,
    rows: rowBuckets.length,
    questions: reports,
    refused: refusals,
  };
  return { table: { ...table, info: { report } }, rowBuckets, report };
}

/**
 * Adds to the advice of each uncalibrated question with enough calibration
 * answers what its learning curve says (see `learning_curve.ts`); `score`
 * scores a question's calibration answers with another fit of it.
 */
function curveAdvice(
  fitted: readonly FittedQuestion[],
  fitTable: FitTable,
  options: TrainOptions,
  score: (f: FittedQuestion, model: FittedModel) => ScoredAnswers,
): void {
  if (options.learningCurve === false) return;
  const needed = minimumCertifiable(options.alpha, options.delta);
  const curved = fitted.filter((f) =>
    f.report.calibration.advice !== null &&
    f.parts.calibration.length >= needed && f.parts.fit.length >= 8
  );
  const curves = learningCurves(
    fitTable,
    curved.map((f) => ({
      name: f.qa.name,
      labels: f.qa.labels,
      fit: f.parts.fit,
      validation: f.parts.validation,
      options: f.qa.options.length,
      scored: f.scored,
      score: (model) => score(f, model),
    })),
    { ...options, scopeP: options.settings.drift.scope_p },
    options.progress,
  );
  curved.forEach((f, i) => {
    const c = f.report.calibration;
    const p = f.parts;
    const answering = p.fit.length + p.validation.length +
      p.calibration.length + p.test.length;
    c.advice = adviceWith(
      c.advice!,
      curveInWords(curves[i]!, answering, options.alpha),
    );
  });
}

/** The traces that answer a question, by part. */
function questionParts(labels: Int32Array, parts: Uint8Array): QuestionParts {
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

/**
 * Answers the traces `indices` as serving would (the engine's `assess` on
 * question `q`, before calibration) and keeps what calibration reads: the
 * full-option confidence (0 for an empty text), whether the answer
 * disagrees with the trace's, the novelty and drift score, and, where the
 * question has an out-of-scope rule, the score it judges.
 */
function scoreAnswers(
  base: Table,
  q: QuestionTable,
  labels: Int32Array,
  texts: readonly string[],
  indices: readonly number[],
): ScoredAnswers {
  const n = indices.length;
  const scoped = q.drift.scope.score !== null;
  const scored: ScoredAnswers = {
    confidences: new Float64Array(n),
    wrong: new Uint8Array(n),
    novelty: new Float32Array(n),
    driftScores: new Float32Array(n),
    scopeScores: new Float32Array(scoped ? n : 0),
  };
  const table: Table = {
    ...base,
    questions: [q],
    byName: new Map([[q.name, q]]),
  };
  const state = new TableState(table);
  for (let t = 0; t < n; t++) {
    const text = prepareText(table, state, texts[indices[t]!]!);
    const a = assess(table, state, text, q.name, {}, QUIET_GUARD);
    scored.confidences[t] = text.empty ? 0 : a.fullConfidence;
    scored.wrong[t] = disagrees(a.answer, q.options[labels[indices[t]!]!]!)
      ? 1
      : 0;
    scored.novelty[t] = a.novelty;
    // An empty text is never certified: its drift score is the largest.
    scored.driftScores[t] = a.driftScore ?? 1;
    if (scoped) scored.scopeScores[t] = a.scopeScore ?? -Infinity;
  }
  scored.scopeScore = q.drift.scope.score;
  return scored;
}

/**
 * Answers `indices` exactly as serving would (single-text drift rule
 * included; the second tier where the table's only failing rule is
 * `low_confidence`) and measures them.
 */
function measureAnswers(
  table: Table,
  state: TableState,
  qa: QuestionAnswers,
  texts: readonly string[],
  indices: readonly number[],
  embeddings?: readonly Float32Array[],
): Measurement {
  const meter = new Meter();
  const tier = table.byName.get(qa.name)?.semantic;
  const threshold = tier?.calibration.threshold ?? null;
  // Both tiers are certified against the two-tier rule's threshold.
  if (tier !== undefined && embeddings !== undefined) {
    setThresholdInForce(table, state, qa.name, threshold);
  }
  for (const i of indices) {
    const text = prepareText(table, state, texts[i]!);
    const a = assess(table, state, text, qa.name, {}, QUIET_GUARD).answer;
    if (
      !a.certified && a.flag === "low_confidence" && tier !== undefined &&
      embeddings !== undefined && threshold !== null
    ) {
      const q = table.byName.get(qa.name)!;
      const s = semanticAssess(
        tier,
        embeddings[i]!,
        undefined,
        fullProbabilities(table, state, text, q),
      );
      if (!s.novel && s.confidence >= threshold) {
        meter.add(true, s.best !== qa.labels[i]);
        continue;
      }
    }
    meter.add(a.certified, disagrees(a, qa.options[qa.labels[i]!]!));
  }
  return meter.result();
}

function splitReport(
  split: Split,
  similarity: number,
  fed: FedOption[],
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
  };
}

/** A question's options with fewer than `THIN_OPTION` training answers, fewest first. */
function thinOptions(
  qa: QuestionAnswers,
  parts: QuestionParts,
): ThinOption[] {
  const counts = new Int32Array(qa.options.length);
  for (const i of parts.fit) counts[qa.labels[i]!]!++;
  for (const i of parts.validation) counts[qa.labels[i]!]!++;
  return qa.options
    .map((option, o) => ({ option, answers: counts[o]! }))
    .filter((t) => t.answers < THIN_OPTION)
    .sort((a, b) => a.answers - b.answers || (a.option < b.option ? -1 : 1));
}

/** The thin options of a question, in words, with what would help. */
function thinInWords(question: string, thin: readonly ThinOption[]): string {
  const shown = thin.slice(0, 8).map((t) => `${t.option} (${t.answers})`);
  const more = thin.length > 8 ? ` and ${thin.length - 8} more` : "";
  return `question "${question}": ${thin.length} ${
    thin.length === 1 ? "option has" : "options have"
  } fewer than ${THIN_OPTION} training answers, so the table will seldom choose ${
    thin.length === 1 ? "it" : "them"
  }: ${shown.join(", ")}${more}; more traces answering ${
    thin.length === 1 ? "it" : "them"
  } would help`;
}

/** How many elements of `flags` are 1 (0 for none). */
function countOnes(flags: Uint8Array | null | undefined): number {
  let n = 0;
  if (flags) { for (const f of flags) n += f; }
  return n;
}

/** What feeding starved options did, in words. */
function fedInWords(fed: readonly FedOption[]): string {
  const shown = fed.slice(0, 6).map((f) =>
    `${f.option} (${f.pinned} of ${f.traces})`
  );
  const more = fed.length > 6 ? ` and ${fed.length - 6} more` : "";
  return `time split: ${fed.length} ${
    fed.length === 1 ? "option is" : "options are"
  } held almost only by the newest traces, so ${
    fed.length === 1 ? "its" : "their"
  } oldest traces train the table and calibration takes the next newest: ${
    shown.join(", ")
  }${more}`;
}

/** The split in one line, for progress. */
function describeSplit(split: Split): string {
  const unit = split.mode === "group"
    ? "groups"
    : split.mode === "random"
    ? "clusters"
    : "texts";
  const parts = PART_NAMES.map((name, p) =>
    `${name} ${split.traces[p]} traces (${split.units[p]} ${unit})`
  ).join(", ");
  return `${split.mode} (${split.reason}): ${parts}`;
}

/** Why a question cannot be trained and certified, or null when it can. */
function refusal(
  q: QuestionAnswers,
  minimumAnswers: number,
  needed: number,
  options: TrainOptions,
): string | null {
  if (q.kind === "choice" && q.options.length < 2) {
    return `question "${q.name}" has a single option ("${
      q.options[0]
    }"); a choice needs at least two`;
  }
  const answered = q.labels.reduce((n, l) => n + (l >= 0 ? 1 : 0), 0);
  if (q.kind === "choice" && q.options.length > answered / 4) {
    return `question "${q.name}" has ${q.options.length} options for ${answered} answers (fewer than 4 answers an option); ` +
      `is it an identifier or free-text column?`;
  }
  if (answered < minimumAnswers) {
    return `question "${q.name}" has ${answered} answers; at least ${minimumAnswers} are needed to train and certify it ` +
      `(${needed} calibration answers at alpha ${options.alpha}, delta ${options.delta}, calibration share ${options.calibrationShare})`;
  }
  return null;
}
