/**
 * The fit step: one question's weights, bias and temperature from its train
 * split.
 *
 * Hyper-parameters (L2 strength, number of epochs) are chosen by the
 * validation log-loss of the ensemble (the average of `ensemble` fits with
 * different seeds; for a linear model, averaging weights averages logits)
 * trained on the fit part; the temperature is fitted on the validation part.
 * The final weights are then fitted on the whole train split (fit and
 * validation) with the chosen settings, averaged over the ensemble, and
 * stored in serving units (the kind scales folded in).
 *
 * @module
 */

import { argmax, softmax } from "../engine/table.ts";
import { logitsOf, type SoftmaxModel, trainSoftmax } from "./softmax_sgd.ts";
import type { TrainingLayout } from "./corpus.ts";
import { type KindScales, storedWeights } from "./sparse.ts";
import { fitTemperature, meanNll } from "./temperature.ts";

/** How a question is fitted. */
export interface FitSettings {
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
  seed: number;
}

/** What the validation part says about the chosen model. */
export interface ValidationFigures {
  /** Per validation answer, the confidence of the best option. */
  confidences: Float64Array;
  /** Per validation answer, 1 when the best option is the reference answer. */
  correct: Uint8Array;
  /** Share correct; null without validation answers. */
  accuracy: number | null;
}

/** A fitted question, before calibration. */
export interface FittedModel {
  /** `rows × options` weights in serving units. */
  weights: Float32Array;
  bias: Float32Array;
  temperature: number;
  l2: number;
  epochs: number;
  validation: ValidationFigures;
}

/** One question's training data. */
export interface FitData {
  /** All traces' texts, as the training step reads them. */
  texts: TrainingLayout;
  /** Per text, the answer's option index (-1: unanswered). */
  labels: Int32Array;
  /** Texts of the fit and validation parts that answer the question. */
  fit: readonly number[];
  validation: readonly number[];
  /** Number of options. */
  options: number;
  /** Number of table rows, and each row's kind (see `radius.ts`). */
  rows: number;
  rowKinds: Uint8Array;
}

/**
 * Fits a question (see the module doc). Deterministic for `settings.seed`.
 * Without validation answers, the largest epoch count and first L2 strength
 * are used and the temperature is 1.
 */
export function fitQuestion(data: FitData, settings: FitSettings): FittedModel {
  const k = data.options;
  const valIdx = data.validation;
  const valLabels = Int32Array.from(valIdx, (i) => data.labels[i]!);
  const valLogits = new Float64Array(valIdx.length * k);
  const scratch = new Float64Array(k);
  const scoreVal = (m: SoftmaxModel) => {
    for (let t = 0; t < valIdx.length; t++) {
      logitsOf(m, k, data.texts, valIdx[t]!, scratch);
      valLogits.set(scratch, t * k);
    }
  };
  const sgd = (l2: number, epochs: number, member: number) => ({
    epochs,
    l2,
    learningRate: settings.learningRate,
    seed: settings.seed + 1009 * member,
    wordDropout: settings.wordDropout,
    minGradient: settings.minGradient,
  });

  let best = {
    l2: settings.l2Grid[0]!,
    epochs: settings.maxEpochs,
    nll: Infinity,
    logits: new Float64Array(0),
  };
  if (valIdx.length > 0 && data.fit.length > 0) {
    for (const l2 of settings.l2Grid) {
      const byEpoch: Float64Array<ArrayBuffer>[] = [];
      for (let member = 0; member < settings.ensemble; member++) {
        trainSoftmax(
          data.texts,
          data.labels,
          data.fit,
          k,
          data.rows,
          sgd(l2, settings.maxEpochs, member),
          (epoch, m) => {
            scoreVal(m);
            const sum = byEpoch[epoch - 1] ??= new Float64Array(
              valLogits.length,
            );
            for (let t = 0; t < sum.length; t++) {
              sum[t]! += valLogits[t]! / settings.ensemble;
            }
          },
        );
      }
      byEpoch.forEach((logits, at) => {
        const t = fitTemperature(logits, valLabels, k);
        const nll = meanNll(logits, valLabels, k, t);
        if (nll < best.nll) best = { l2, epochs: at + 1, nll, logits };
      });
    }
  }
  const temperature = best.logits.length > 0
    ? fitTemperature(best.logits, valLabels, k)
    : 1;
  const validation = validationFigures(best.logits, valLabels, k, temperature);

  const trainIdx = [...data.fit, ...data.validation].sort((a, b) => a - b);
  const weights = new Float32Array(data.rows * k);
  const bias = new Float32Array(k);
  for (let member = 0; member < settings.ensemble; member++) {
    const m = trainSoftmax(
      data.texts,
      data.labels,
      trainIdx,
      k,
      data.rows,
      sgd(best.l2, best.epochs, member),
    );
    for (let i = 0; i < weights.length; i++) {
      weights[i]! += m.weights[i]! / settings.ensemble;
    }
    for (let j = 0; j < k; j++) bias[j]! += m.bias[j]! / settings.ensemble;
  }
  return {
    weights: storedWeights(weights, k, data.rowKinds, settings.kindScales),
    bias,
    temperature,
    l2: best.l2,
    epochs: best.epochs,
    validation,
  };
}

function validationFigures(
  logits: Float64Array,
  labels: Int32Array,
  k: number,
  temperature: number,
): ValidationFigures {
  const n = logits.length === 0 ? 0 : labels.length;
  const confidences = new Float64Array(n);
  const correct = new Uint8Array(n);
  let right = 0;
  for (let t = 0; t < n; t++) {
    const p = softmax(logits.subarray(t * k, (t + 1) * k), temperature);
    const a = argmax(p);
    confidences[t] = p[a]!;
    if (a === labels[t]) {
      right++;
      correct[t] = 1;
    }
  }
  return { confidences, correct, accuracy: n === 0 ? null : right / n };
}
