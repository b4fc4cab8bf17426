/**
 * Fitting a question's second tier on sentence embeddings: a softmax
 * regression trained with the project's own AdaGrad steps
 * (`softmax_sgd.ts`: each text is one dense group of `dim` entries), its
 * epochs chosen and its temperature fitted on the validation part, then
 * refitted on fit and validation; and the novelty guard's reference (the
 * option means and a whitening of the fit texts' shared covariance).
 *
 * @module
 */

import { argmax, type NoveltyReference, softmax } from "../engine/mod.ts";
import type { TrainingLayout } from "./corpus.ts";
import { type SoftmaxModel, trainSoftmax } from "./softmax_sgd.ts";
import { fitTemperature, meanNll } from "./temperature.ts";

/** How the second tier is fitted. */
export interface SemanticFitSettings {
  /** Embeddings are multiplied by this (the scale the anchor measured best at). */
  scale: number;
  maxEpochs: number;
  l2: number;
  learningRate: number;
  seed: number;
  /** Options computed per step (see `softmax_sgd.ts`); 0: all. */
  candidates: number;
  /** Covariance shrinkage towards its diagonal, in [0, 1]. */
  shrinkage: number;
}

/** Defaults, chosen on BANKING77's validation parts (see docs/training.md). */
export const DEFAULT_SEMANTIC_FIT: SemanticFitSettings = {
  scale: 2,
  maxEpochs: 12,
  l2: 1e-5,
  learningRate: 0.3,
  seed: 1,
  candidates: 16,
  shrinkage: 0.2,
};

/** A fitted second tier before calibration. */
export interface FittedTier {
  weights: Float32Array;
  bias: Float32Array;
  temperature: number;
  /** Weight of the table's log-probabilities in the logits (see `SemanticTier`). */
  tableWeight: number;
  epochs: number;
  /** The fit-only model's validation answers: confidence, best option, correct. */
  validation: {
    confidences: Float64Array;
    best: Int32Array;
    correct: Uint8Array;
  };
}

/**
 * A training layout in which trace `i` is one group of `dim` entries, the
 * embedding's coordinates times `scale` (rows 0 .. dim-1).
 */
export function denseLayout(
  embeddings: readonly Float32Array[],
  dim: number,
  scale: number,
): TrainingLayout {
  const n = embeddings.length;
  const entryRows = new Int32Array(n * dim);
  const entryValues = new Float32Array(n * dim);
  for (let i = 0; i < n; i++) {
    const e = embeddings[i]!;
    for (let d = 0; d < dim; d++) {
      entryRows[i * dim + d] = d;
      entryValues[i * dim + d] = e[d]! * scale;
    }
  }
  return {
    textOf: Int32Array.from({ length: n }, (_, i) => i),
    wordStart: Int32Array.from({ length: n + 1 }, (_, i) => i),
    words: Int32Array.from({ length: n }, (_, i) => i),
    bigramStart: new Int32Array(n + 1),
    bigramRows: new Int32Array(0),
    entryStart: Int32Array.from({ length: n + 1 }, (_, i) => i * dim),
    entryRows,
    entryValues,
    bigramValue: 0,
  };
}

/** Logits of `indices` under a dense model, `indices.length × k` row-major. */
function denseLogits(
  model: SoftmaxModel,
  embeddings: readonly Float32Array[],
  indices: readonly number[],
  k: number,
  scale: number,
): Float64Array {
  const out = new Float64Array(indices.length * k);
  const dim = model.weights.length / k;
  indices.forEach((i, t) => {
    const e = embeddings[i]!;
    const base = t * k;
    for (let j = 0; j < k; j++) out[base + j] = model.bias[j]!;
    for (let d = 0; d < dim; d++) {
      const x = e[d]! * scale;
      const w = d * k;
      for (let j = 0; j < k; j++) out[base + j]! += x * model.weights[w + j]!;
    }
  });
  return out;
}

/** Weights of the table's log-probabilities tried on the validation part. */
export const TABLE_WEIGHTS: readonly number[] = [0, 0.25, 0.5, 0.75, 1, 1.5, 2];

/**
 * Fits the second tier: epochs chosen by validation NLL on a fit-only run;
 * then, when the table's log-probabilities on the validation answers are
 * given (`n × k`, from the table's own fit-only model), the weight they
 * get among `TABLE_WEIGHTS` and the temperature, by validation NLL; then
 * the weights refitted on fit and validation for that many epochs
 * (without validation answers: `maxEpochs` on fit, temperature 1, the
 * embedding alone). Deterministic for a seed.
 */
export function fitTier(
  embeddings: readonly Float32Array[],
  labels: Int32Array,
  fit: readonly number[],
  validation: readonly number[],
  k: number,
  dim: number,
  settings: SemanticFitSettings = DEFAULT_SEMANTIC_FIT,
  tableLogProbs: Float64Array | null = null,
): FittedTier {
  const layout = denseLayout(embeddings, dim, settings.scale);
  const sgd = {
    epochs: settings.maxEpochs,
    l2: settings.l2,
    learningRate: settings.learningRate,
    seed: settings.seed,
    wordDropout: 0,
    minGradient: 0,
    candidates: settings.candidates,
  };
  const valLabels = Int32Array.from(validation, (i) => labels[i]!);
  let best = { epoch: settings.maxEpochs, nll: Infinity };
  let bestLogits: Float64Array = new Float64Array(0);
  if (validation.length > 0) {
    trainSoftmax(layout, labels, fit, k, dim, sgd, (epoch, model) => {
      const logits = denseLogits(
        model,
        embeddings,
        validation,
        k,
        settings.scale,
      );
      const nll = meanNll(
        logits,
        valLabels,
        k,
        fitTemperature(logits, valLabels, k),
      );
      if (nll < best.nll) {
        best = { epoch, nll };
        bestLogits = logits;
      }
      // Two epochs without improvement end the search.
      return epoch - best.epoch < 2;
    });
  }
  let tableWeight = 0;
  let temperature = 1;
  if (validation.length > 0) {
    let bestNll = Infinity;
    const weights = tableLogProbs === null ? [0] : TABLE_WEIGHTS;
    let chosen = bestLogits;
    for (const w of weights) {
      const z = w === 0
        ? bestLogits
        : bestLogits.map((x, t) => x + w * tableLogProbs![t]!);
      const t = fitTemperature(z, valLabels, k);
      const nll = meanNll(z, valLabels, k, t);
      if (nll < bestNll - 1e-9) {
        bestNll = nll;
        tableWeight = w;
        temperature = t;
        chosen = z;
      }
    }
    bestLogits = chosen;
  }
  const confidences = new Float64Array(validation.length);
  const bestOption = new Int32Array(validation.length);
  const correct = new Uint8Array(validation.length);
  const p = new Float64Array(k);
  for (let t = 0; t < validation.length; t++) {
    softmax(bestLogits.subarray(t * k, (t + 1) * k), temperature, undefined, p);
    const b = argmax(p);
    confidences[t] = p[b]!;
    bestOption[t] = b;
    correct[t] = b === valLabels[t] ? 1 : 0;
  }
  const all = [...fit, ...validation].sort((a, b) => a - b);
  const model = trainSoftmax(layout, labels, all, k, dim, {
    ...sgd,
    epochs: best.epoch,
  });
  // Stored in serving units: the engine multiplies the embedding by the
  // same scale, so the weights are kept as trained.
  return {
    weights: model.weights,
    bias: model.bias,
    temperature,
    tableWeight,
    epochs: best.epoch,
    validation: { confidences, best: bestOption, correct },
  };
}

/**
 * The novelty guard's reference from the training texts `train`: option
 * means and the Cholesky whitening of the pooled within-option covariance,
 * shrunk by `shrinkage` towards its diagonal (plus a small ridge, so it is
 * always invertible). `scores` is left empty (calibration fills it) and
 * `p` as given.
 */
export function noveltyReference(
  embeddings: readonly Float32Array[],
  labels: Int32Array,
  train: readonly number[],
  k: number,
  dim: number,
  shrinkage: number,
  p: number,
): NoveltyReference {
  const means = new Float64Array(k * dim);
  const counts = new Float64Array(k);
  for (const i of train) {
    const y = labels[i]!;
    counts[y]!++;
    const e = embeddings[i]!;
    for (let d = 0; d < dim; d++) means[y * dim + d]! += e[d]!;
  }
  for (let y = 0; y < k; y++) {
    if (counts[y]! > 0) {
      for (let d = 0; d < dim; d++) means[y * dim + d]! /= counts[y]!;
    }
  }
  // Pooled within-option covariance (upper triangle, then mirrored).
  const cov = new Float64Array(dim * dim);
  const centred = new Float64Array(dim);
  for (const i of train) {
    const y = labels[i]!;
    const e = embeddings[i]!;
    for (let d = 0; d < dim; d++) centred[d] = e[d]! - means[y * dim + d]!;
    for (let a = 0; a < dim; a++) {
      const ca = centred[a]!;
      if (ca === 0) continue;
      const row = a * dim;
      for (let b = a; b < dim; b++) cov[row + b]! += ca * centred[b]!;
    }
  }
  const n = Math.max(1, train.length - k);
  let trace = 0;
  for (let a = 0; a < dim; a++) {
    for (let b = a; b < dim; b++) {
      const v = cov[a * dim + b]! / n;
      cov[a * dim + b] = v;
      cov[b * dim + a] = v;
    }
    trace += cov[a * dim + a]!;
  }
  const ridge = 1e-3 * (trace / dim || 1);
  for (let a = 0; a < dim; a++) {
    for (let b = 0; b < dim; b++) {
      if (a !== b) cov[a * dim + b]! *= 1 - shrinkage;
    }
    cov[a * dim + a]! += ridge;
  }
  const inverse = inverseCholesky(cov, dim);
  // projection[d, c] = inverse[c, d]: a text's whitened coordinates are
  // x^T projection = L^-1 x.
  const projection = new Float32Array(dim * dim);
  for (let c = 0; c < dim; c++) {
    for (let d = 0; d <= c; d++) {
      projection[d * dim + c] = inverse[c * dim + d]!;
    }
  }
  const whitened = new Float32Array(k * dim);
  for (let y = 0; y < k; y++) {
    for (let c = 0; c < dim; c++) {
      let s = 0;
      for (let d = 0; d <= c; d++) {
        s += inverse[c * dim + d]! * means[y * dim + d]!;
      }
      // An option with no training text is put out of reach.
      whitened[y * dim + c] = counts[y]! > 0 ? s : 1e6;
    }
  }
  return {
    projection,
    rank: dim,
    means: whitened,
    scores: new Float32Array(0),
    p,
  };
}

/**
 * `L^-1` for the Cholesky factor `L` of a symmetric positive definite
 * `dim × dim` matrix (row-major, lower triangular result). Throws a
 * RangeError when the matrix is not positive definite.
 */
export function inverseCholesky(a: Float64Array, dim: number): Float64Array {
  const l = new Float64Array(dim * dim);
  for (let i = 0; i < dim; i++) {
    for (let j = 0; j <= i; j++) {
      let s = a[i * dim + j]!;
      for (let m = 0; m < j; m++) s -= l[i * dim + m]! * l[j * dim + m]!;
      if (i === j) {
        if (!(s > 0)) {
          throw new RangeError(
            `The covariance is not positive definite (pivot ${i}: ${s})`,
          );
        }
        l[i * dim + i] = Math.sqrt(s);
      } else l[i * dim + j] = s / l[j * dim + j]!;
    }
  }
  // Forward substitution for each column of the identity.
  const inv = new Float64Array(dim * dim);
  for (let c = 0; c < dim; c++) {
    for (let i = c; i < dim; i++) {
      let s = i === c ? 1 : 0;
      for (let m = c; m < i; m++) s -= l[i * dim + m]! * inv[m * dim + c]!;
      inv[i * dim + c] = s / l[i * dim + i]!;
    }
  }
  return inv;
}
