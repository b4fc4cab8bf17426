/**
 * Training a table from traces: split, fit, calibrate, certify, measure.
 *
 * Per question: the traces that answer it are split (disjoint by normalised
 * text) into train, calibration and test. Hyper-parameters and the
 * temperature are chosen on a validation part carved from the train split;
 * the final weights are then fitted on the whole train split. Calibration
 * picks the certified threshold (see `certify.ts`). The test split is used
 * for nothing but the report.
 *
 * @module
 */

import {
  bucketKind,
  cachedBuckets,
  DEFAULT_FEATURIZER,
  featurize,
  type FeaturizerSettings,
  type TextFeatures,
} from "../engine/features.ts";
import {
  assess,
  type PreparedText,
  prepareFeatures,
} from "../engine/answer.ts";
import { DEFAULT_DRIFT, driftScore, QUIET_GUARD } from "../engine/drift.ts";
import {
  BIGRAM_ROW,
  computeGainBounds,
  NGRAM_ROW,
  WORD_ROW,
} from "../engine/radius.ts";
import {
  argmax,
  noveltyOf,
  type QuestionTable,
  scoreText,
  softmax,
  type Table,
  type TableSettings,
} from "../engine/table.ts";
import { TableState } from "../engine/state.ts";
import { textKey } from "../engine/text.ts";
import {
  candidateGrid,
  chooseThreshold,
  measure,
  type Measurement,
  scanStart,
} from "./certify.ts";
import { logitsOf, type SoftmaxModel, trainSoftmax } from "./softmax_sgd.ts";
import {
  DEFAULT_KIND_SCALES,
  type KindScales,
  storedWeights,
  toSparse,
} from "./sparse.ts";
import { assignSplits, CALIBRATION, TRAIN, unitHash } from "./split.ts";
import { minimumCertifiable } from "./stats.ts";
import { fitTemperature } from "./temperature.ts";
import type { QuestionAnswers, TraceSet } from "./traces.ts";

/** Everything training can be told. */
export interface TrainOptions {
  alpha: number;
  delta: number;
  seed: number;
  /** Share of traces for calibration and for test. */
  calibrationShare: number;
  testShare: number;
  featurizer: FeaturizerSettings;
  /** Settings stored in the bundle. */
  settings: TableSettings;
  /** L2 strengths tried; the best on validation data is kept. */
  l2Grid: number[];
  /** Most epochs; the best number on validation data is kept. */
  maxEpochs: number;
  learningRate: number;
  /** Probability of dropping a word or bigram at each training step. */
  wordDropout: number;
  /** Gradients below this (per option) are not applied. */
  minGradient: number;
  /** Final weights are the average of this many fits with different seeds. */
  ensemble: number;
  /** Training-time scale of word, n-gram and bigram rows (see `sparse.ts`). */
  kindScales: KindScales;
  /** Share of the train split held out to choose hyper-parameters and the temperature. */
  validationShare: number;
  /** Called with a line of progress now and then. */
  progress?: (line: string) => void;
  /** Called with a warning (a refused question); defaults to `progress`. */
  warn?: (line: string) => void;
}

/** Defaults for every training option. */
export const DEFAULT_TRAIN_OPTIONS: TrainOptions = {
  alpha: 0.05,
  delta: 0.05,
  seed: 1,
  calibrationShare: 0.2,
  testShare: 0.05,
  featurizer: DEFAULT_FEATURIZER,
  settings: {
    min_radius: 2,
    serve_new_options: false,
    force_thresholds: {},
    drift: DEFAULT_DRIFT,
  },
  l2Grid: [1e-4],
  maxEpochs: 10,
  learningRate: 0.15,
  wordDropout: 0.2,
  minGradient: 0.02,
  ensemble: 3,
  kindScales: DEFAULT_KIND_SCALES,
  validationShare: 0.15,
};

/** One question's part of the training report. */
export interface QuestionReport {
  name: string;
  kind: string;
  options: number;
  answers: { train: number; calibration: number; test: number };
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
    candidates_tested: number;
    certified: number;
    disagreements: number;
  };
  /** Held-out test figures, measured as serving answers (drift guard's single-text rule included). */
  test: Measurement;
}

/** The training report (`report.json`). */
export interface TrainReport {
  tool: string;
  alpha: number;
  delta: number;
  seed: number;
  splits: { calibration: number; test: number };
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

/** A question that cannot be trained: too few answers. */
export class TrainingError extends Error {
  override name = "TrainingError";
}

/** Trains every question of `traces`. Deterministic for `options.seed`. */
export function train(traces: TraceSet, options: TrainOptions): TrainResult {
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
  const split = assignSplits(texts, {
    calibration: options.calibrationShare,
    test: options.testShare,
  }, options.seed);
  say(`featurising ${texts.length} texts`);
  const bucketsOf = cachedBuckets(options.featurizer);
  const features: TextFeatures[] = texts.map((t) =>
    featurize(t, options.featurizer, bucketsOf)
  );

  // Rows: every bucket a train-split text has, in order of appearance.
  const rowOf = new Int32Array(1 << options.featurizer.buckets_log2).fill(-1);
  const buckets: number[] = [];
  const addRow = (b: number) => {
    if (rowOf[b]! < 0) {
      rowOf[b] = buckets.length;
      buckets.push(b);
    }
  };
  for (let i = 0; i < texts.length; i++) {
    if (split[i] !== TRAIN) continue;
    for (const wb of features[i]!.wordBuckets) for (const b of wb) addRow(b);
    for (const b of features[i]!.bigramBuckets) addRow(b);
  }
  const rowBuckets = Int32Array.from(buckets);
  const rowKinds = Uint8Array.from(buckets, (b) => {
    const kind = bucketKind(b, options.featurizer);
    return kind === "word"
      ? WORD_ROW
      : kind === "ngram"
      ? NGRAM_ROW
      : BIGRAM_ROW;
  });
  const data = toSparse(
    features,
    rowOf,
    options.featurizer.ngram_average_min,
    options.kindScales,
  );
  const table: Table = {
    featurizer: options.featurizer,
    settings: options.settings,
    rowOf,
    rowCount: buckets.length,
    questions: [],
    byName: new Map(),
    state: new TableState(),
    info: {},
  };
  const reports: QuestionReport[] = [];
  for (const qa of trainable) {
    say(`training "${qa.name}" (${qa.options.length} options)`);
    const { question, report } = trainQuestion(
      qa,
      table,
      features,
      data,
      split,
      rowKinds,
      options,
    );
    table.questions.push(question);
    table.byName.set(question.name, question);
    reports.push(report);
  }
  const report: TrainReport = {
    tool: "decision-tables",
    alpha: options.alpha,
    delta: options.delta,
    seed: options.seed,
    splits: { calibration: options.calibrationShare, test: options.testShare },
    traces: texts.length,
    rows: buckets.length,
    questions: reports,
    refused: refusals,
  };
  table.info = { report };
  return { table, rowBuckets, report };
}

function trainQuestion(
  qa: QuestionAnswers,
  table: Table,
  features: TextFeatures[],
  data: ReturnType<typeof toSparse>,
  split: Uint8Array,
  rowKinds: Uint8Array,
  options: TrainOptions,
): { question: QuestionTable; report: QuestionReport } {
  const k = qa.options.length;
  const rows = table.rowCount;
  const trainIdx: number[] = [];
  const calIdx: number[] = [];
  const testIdx: number[] = [];
  for (let i = 0; i < qa.labels.length; i++) {
    if (qa.labels[i]! < 0) continue;
    (split[i] === TRAIN
      ? trainIdx
      : split[i] === CALIBRATION
      ? calIdx
      : testIdx).push(i);
  }
  // Validation part of the train split, disjoint by normalised text too.
  const fitIdx: number[] = [];
  const valIdx: number[] = [];
  for (const i of trainIdx) {
    (unitHash(textKey(textOfFeatures(features[i]!)), options.seed + 7) <
        options.validationShare
      ? valIdx
      : fitIdx)
      .push(i);
  }
  const valLabels = Int32Array.from(valIdx, (i) => qa.labels[i]!);
  const valLogits = new Float64Array(valIdx.length * k);
  const scratch = new Float64Array(k);
  const scoreVal = (m: SoftmaxModel) => {
    for (let t = 0; t < valIdx.length; t++) {
      logitsOf(m, k, data, valIdx[t]!, scratch);
      valLogits.set(scratch, t * k);
    }
  };

  // Hyper-parameters: L2 strength and epochs, by validation log-loss of the
  // ensemble (the average of `ensemble` fits with different seeds; for a
  // linear model, averaging weights averages logits).
  const sgd = (l2: number, epochs: number, member: number) => ({
    epochs,
    l2,
    learningRate: options.learningRate,
    seed: options.seed + 1009 * member,
    wordDropout: options.wordDropout,
    minGradient: options.minGradient,
  });
  let best: { l2: number; epochs: number; nll: number; logits: Float64Array } =
    {
      l2: options.l2Grid[0]!,
      epochs: options.maxEpochs,
      nll: Infinity,
      logits: new Float64Array(0),
    };
  if (valIdx.length > 0 && fitIdx.length > 0) {
    for (const l2 of options.l2Grid) {
      const byEpoch: Float64Array<ArrayBuffer>[] = [];
      for (let member = 0; member < options.ensemble; member++) {
        trainSoftmax(
          data,
          qa.labels,
          fitIdx,
          k,
          rows,
          sgd(l2, options.maxEpochs, member),
          (epoch, m) => {
            scoreVal(m);
            const sum = byEpoch[epoch - 1] ??= new Float64Array(
              valLogits.length,
            );
            for (let t = 0; t < sum.length; t++) {
              sum[t]! += valLogits[t]! / options.ensemble;
            }
          },
        );
      }
      byEpoch.forEach((logits, at) => {
        const nll = meanNllAtBestTemperature(logits, valLabels, k);
        if (nll < best.nll) best = { l2, epochs: at + 1, nll, logits };
      });
    }
  }
  const temperature = best.logits.length > 0
    ? fitTemperature(best.logits, valLabels, k)
    : 1;
  let validationAccuracy: number | null = null;
  const reference = new Float64Array(valIdx.length);
  const valCorrect = new Uint8Array(valIdx.length);
  if (valIdx.length > 0) {
    let right = 0;
    for (let t = 0; t < valIdx.length; t++) {
      const row = best.logits.subarray(t * k, (t + 1) * k);
      const p = softmax(row, temperature);
      const a = argmax(p);
      reference[t] = p[a]!;
      if (a === valLabels[t]) {
        right++;
        valCorrect[t] = 1;
      }
    }
    validationAccuracy = right / valIdx.length;
  }

  // Final weights on the whole train split, averaged over the ensemble, in
  // serving units (the kind scales folded in).
  const weights = new Float32Array(rows * k);
  const bias = new Float32Array(k);
  for (let member = 0; member < options.ensemble; member++) {
    const m = trainSoftmax(
      data,
      qa.labels,
      trainIdx,
      k,
      rows,
      sgd(best.l2, best.epochs, member),
    );
    for (let i = 0; i < weights.length; i++) {
      weights[i]! += m.weights[i]! / options.ensemble;
    }
    for (let j = 0; j < k; j++) bias[j]! += m.bias[j]! / options.ensemble;
  }
  const model = {
    weights: storedWeights(weights, k, rowKinds, options.kindScales),
    bias,
  };
  const gains = computeGainBounds(
    model.weights,
    k,
    rowKinds,
    options.featurizer.ngram_average_min,
  );
  const question: QuestionTable = {
    name: qa.name,
    kind: qa.kind,
    options: qa.options,
    weights: model.weights,
    bias: model.bias,
    temperature,
    calibration: {
      status: "uncalibrated",
      threshold: null,
      alpha: options.alpha,
      delta: options.delta,
      reason: null,
    },
    wordGain: gains.wordGain,
    bigramGain: gains.bigramGain,
    drift: { scores: new Float32Array(0), novelty: new Float32Array(0) },
    optionIndex: new Map(qa.options.map((o, i) => [o, i])),
  };

  // Calibration: confidences and disagreements, then the threshold.
  const calConf = new Float64Array(calIdx.length);
  const calWrong = new Uint8Array(calIdx.length);
  const driftScores = new Float32Array(calIdx.length);
  const novelties = new Float32Array(calIdx.length);
  for (let t = 0; t < calIdx.length; t++) {
    const f = features[calIdx[t]!]!;
    const logits = scoreText(table, question, f);
    const p = softmax(logits, temperature);
    const a = argmax(p);
    calConf[t] = f.empty ? 0 : p[a]!;
    calWrong[t] = a === qa.labels[calIdx[t]!] ? 0 : 1;
    novelties[t] = noveltyOf(table, f);
    driftScores[t] = driftScore(novelties[t]!, p[a]!);
  }
  question.drift.scores = driftScores.sort();
  question.drift.novelty = novelties.sort();
  // The scan starts where the evidence should be strongest, judged on validation data only
  // (so the grid is fixed before any calibration label is seen).
  const needed = minimumCertifiable(options.alpha, options.delta);
  const start = calIdx.length === 0 ? 1 : scanStart(
    reference,
    valCorrect,
    calIdx.length,
    Math.max(1.5 * needed, 200),
    options.alpha,
    options.delta,
  );
  const grid = candidateGrid(reference, start);
  const choice = chooseThreshold(
    calConf,
    calWrong,
    grid,
    options.alpha,
    options.delta,
  );
  question.calibration = {
    status: choice.threshold === null ? "uncalibrated" : "calibrated",
    threshold: choice.threshold,
    alpha: options.alpha,
    delta: options.delta,
    reason: choice.reason,
  };

  // Test: answer exactly as serving would, then measure.
  table.byName.set(question.name, question);
  const certified = new Uint8Array(testIdx.length);
  const wrong = new Uint8Array(testIdx.length);
  for (let t = 0; t < testIdx.length; t++) {
    const f = features[testIdx[t]!]!;
    const prepared: PreparedText = prepareFeatures(table, f);
    const a = assess(table, prepared, qa.name, {}, QUIET_GUARD).answer;
    certified[t] = a.certified ? 1 : 0;
    const label = qa.options[qa.labels[testIdx[t]!]!]!;
    const given = a.choice ?? String(a.answer);
    wrong[t] = given === label ? 0 : 1;
  }
  const report: QuestionReport = {
    name: qa.name,
    kind: qa.kind,
    options: k,
    answers: {
      train: trainIdx.length,
      calibration: calIdx.length,
      test: testIdx.length,
    },
    model: {
      l2: best.l2,
      epochs: best.epochs,
      temperature,
      validation_accuracy: validationAccuracy,
    },
    calibration: {
      status: question.calibration.status,
      threshold: choice.threshold,
      reason: choice.reason,
      candidates_tested: choice.tested,
      certified: choice.certified,
      disagreements: choice.disagreements,
    },
    test: measure(certified, wrong),
  };
  return { question, report };
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

function textOfFeatures(f: TextFeatures): string {
  return f.words.join(" ");
}

function meanNllAtBestTemperature(
  logits: Float64Array,
  labels: Int32Array,
  k: number,
): number {
  const t = fitTemperature(logits, labels, k);
  let total = 0;
  for (let i = 0; i < labels.length; i++) {
    const p = softmax(logits.subarray(i * k, (i + 1) * k), t);
    total -= Math.log(Math.max(p[labels[i]!]!, 1e-300));
  }
  return labels.length === 0 ? 0 : total / labels.length;
}
