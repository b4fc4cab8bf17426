/**
 * Multinomial logistic regression on sparse rows, trained with AdaGrad.
 *
 * L2 regularisation is applied to the rows an example touches, so frequent
 * features are held back more than rare ones, and the cost of a step stays
 * proportional to the example's size.
 *
 * @module
 */

import type { SparseTexts } from "./sparse.ts";
import { seededRandom, shuffle } from "./split.ts";

/** Training settings. */
export interface SgdOptions {
  epochs: number;
  l2: number;
  learningRate: number;
  seed: number;
}

/** Weights of a trained model: `rowCount × K` row-major, and a bias per option. */
export interface SoftmaxModel {
  weights: Float32Array;
  bias: Float32Array;
}

/** Raw scores of one sparse text under a model. */
export function logitsOf(
  model: SoftmaxModel,
  k: number,
  data: SparseTexts,
  i: number,
  out: Float64Array,
): Float64Array {
  const { weights, bias } = model;
  for (let j = 0; j < k; j++) out[j] = bias[j]!;
  for (let t = data.offsets[i]!; t < data.offsets[i + 1]!; t++) {
    const base = data.rows[t]! * k;
    const v = data.values[t]!;
    for (let j = 0; j < k; j++) out[j]! += v * weights[base + j]!;
  }
  return out;
}

/**
 * Trains on the texts listed in `examples`, whose answers are `labels[i]`.
 * `afterEpoch` is called after every epoch and may return false to stop.
 * Deterministic for a seed.
 */
export function trainSoftmax(
  data: SparseTexts,
  labels: Int32Array,
  examples: readonly number[],
  k: number,
  rowCount: number,
  options: SgdOptions,
  afterEpoch?: (epoch: number, model: SoftmaxModel) => boolean | void,
): SoftmaxModel {
  const weights = new Float32Array(rowCount * k);
  const bias = new Float32Array(k);
  const sq = new Float32Array(rowCount * k);
  const biasSq = new Float32Array(k);
  const model = { weights, bias };
  const random = seededRandom(options.seed);
  const order = [...examples];
  const logits = new Float64Array(k);
  const g = new Float64Array(k);
  const { l2, learningRate: lr } = options;
  const eps = 1e-8;
  for (let epoch = 1; epoch <= options.epochs; epoch++) {
    shuffle(order, random);
    for (const i of order) {
      logitsOf(model, k, data, i, logits);
      let max = -Infinity;
      for (let j = 0; j < k; j++) if (logits[j]! > max) max = logits[j]!;
      let sum = 0;
      for (let j = 0; j < k; j++) {
        const e = Math.exp(logits[j]! - max);
        g[j] = e;
        sum += e;
      }
      const y = labels[i]!;
      for (let j = 0; j < k; j++) g[j] = g[j]! / sum - (j === y ? 1 : 0);
      for (let t = data.offsets[i]!; t < data.offsets[i + 1]!; t++) {
        const base = data.rows[t]! * k;
        const v = data.values[t]!;
        for (let j = 0; j < k; j++) {
          const at = base + j;
          const w = weights[at]!;
          const grad = v * g[j]! + l2 * w;
          const s = sq[at]! + grad * grad;
          sq[at] = s;
          weights[at] = w - lr * grad / Math.sqrt(s + eps);
        }
      }
      for (let j = 0; j < k; j++) {
        const grad = g[j]!;
        biasSq[j]! += grad * grad;
        bias[j]! -= lr * grad / Math.sqrt(biasSq[j]! + eps);
      }
    }
    if (afterEpoch?.(epoch, model) === false) break;
  }
  return model;
}
