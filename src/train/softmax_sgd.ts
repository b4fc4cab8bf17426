/**
 * Multinomial logistic regression on sparse rows, trained with AdaGrad.
 *
 * L2 regularisation is applied to the rows an example touches, so frequent
 * features are held back more than rare ones, and the cost of a step stays
 * proportional to the example's size.
 *
 * @module
 */

import type { TrainingLayout } from "./corpus.ts";
import { seededRandom, shuffle } from "./split.ts";

/** Training settings. */
export interface SgdOptions {
  epochs: number;
  l2: number;
  learningRate: number;
  seed: number;
  /** Probability of dropping each word (with its n-grams) and each bigram at each step. */
  wordDropout: number;
  /** Options whose gradient is smaller than this in magnitude are not updated at a step. */
  minGradient: number;
}

/** Weights of a trained model: `rowCount × K` row-major, and a bias per option. */
export interface SoftmaxModel {
  weights: Float32Array;
  bias: Float32Array;
}

/** Raw scores of trace `i`'s text under a model (all its entries, no dropout). */
export function logitsOf(
  model: SoftmaxModel,
  k: number,
  data: TrainingLayout,
  i: number,
  out: Float64Array,
): Float64Array {
  const { weights, bias } = model;
  const { wordStart, words, entryStart, entryRows, entryValues } = data;
  for (let j = 0; j < k; j++) out[j] = bias[j]!;
  const t = data.textOf[i]!;
  for (let x = wordStart[t]!; x < wordStart[t + 1]!; x++) {
    const w = words[x]!;
    for (let e = entryStart[w]!; e < entryStart[w + 1]!; e++) {
      const base = entryRows[e]! * k;
      const v = entryValues[e]!;
      for (let j = 0; j < k; j++) out[j]! += v * weights[base + j]!;
    }
  }
  const v = data.bigramValue;
  for (let x = data.bigramStart[t]!; x < data.bigramStart[t + 1]!; x++) {
    const r = data.bigramRows[x]!;
    if (r < 0) continue;
    for (let j = 0; j < k; j++) out[j]! += v * weights[r * k + j]!;
  }
  return out;
}

/**
 * Trains on the texts listed in `examples`, whose answers are `labels[i]`.
 * Each step drops whole words and bigrams at random (`wordDropout`) and
 * updates only the options whose gradient is at least `minGradient` (about
 * 3 of 77 on BANKING77: the main speed-up, and slightly better held-out
 * accuracy). `afterEpoch` is called after every epoch and may return false
 * to stop; `tick` is told the epoch and examples done now and then. The
 * weights are trained in `into` when given (zeroed first). Deterministic for
 * a seed.
 */
export function trainSoftmax(
  data: TrainingLayout,
  labels: Int32Array,
  examples: ArrayLike<number>,
  k: number,
  rowCount: number,
  options: SgdOptions,
  afterEpoch?: (epoch: number, model: SoftmaxModel) => boolean | void,
  tick?: (epoch: number, examples: number) => void,
  into?: Float32Array,
): SoftmaxModel {
  const weights = into ?? new Float32Array(rowCount * k);
  if (weights.length !== rowCount * k) {
    throw new RangeError(
      `Weights must hold ${rowCount} rows × ${k} options: got ${weights.length}`,
    );
  }
  weights.fill(0);
  const bias = new Float32Array(k);
  const sq = new Float32Array(rowCount * k);
  const biasSq = new Float64Array(k);
  const model = { weights, bias };
  const random = seededRandom(options.seed);
  const order = Array.from(examples);
  const logits = new Float64Array(k);
  const g = new Float64Array(k);
  const active = new Int32Array(k);
  const { l2, learningRate: lr, wordDropout, minGradient } = options;
  const { textOf, wordStart, words, entryStart, entryRows, entryValues } = data;
  const { bigramStart, bigramRows, bigramValue } = data;
  let maxEntries = 0;
  let maxGroups = 0;
  for (const i of order) {
    const t = textOf[i]!;
    let entries = 0;
    for (let x = wordStart[t]!; x < wordStart[t + 1]!; x++) {
      entries += entryStart[words[x]! + 1]! - entryStart[words[x]!]!;
    }
    const groups = wordStart[t + 1]! - wordStart[t]! + bigramStart[t + 1]! -
      bigramStart[t]!;
    maxEntries = Math.max(maxEntries, entries + groups);
    maxGroups = Math.max(maxGroups, groups);
  }
  const keep = new Uint8Array(maxGroups);
  const bases = new Int32Array(maxEntries);
  const vals = new Float64Array(maxEntries);
  const eps = 1e-8;
  for (let epoch = 1; epoch <= options.epochs; epoch++) {
    shuffle(order, random);
    let done = 0;
    for (const i of order) {
      if ((++done & 4095) === 0) tick?.(epoch, done);
      const t = textOf[i]!;
      const w0 = wordStart[t]!;
      const w1 = wordStart[t + 1]!;
      const b0 = bigramStart[t]!;
      const b1 = bigramStart[t + 1]!;
      // One dropout draw per word, then per bigram with a row, up to the
      // last one with entries (the groups of the per-text rows of earlier
      // versions, so that a seed trains the same weights).
      let count = 0;
      for (let x = b1 - 1; x >= b0 && count === 0; x--) {
        if (bigramRows[x]! >= 0) {
          count = w1 - w0;
          for (let y = b0; y <= x; y++) if (bigramRows[y]! >= 0) count++;
        }
      }
      for (let x = w1 - 1; x >= w0 && count === 0; x--) {
        if (entryStart[words[x]! + 1]! > entryStart[words[x]!]!) {
          count = x - w0 + 1;
        }
      }
      const drop = wordDropout > 0 && count > 0;
      if (drop) {
        for (let d = 0; d < count; d++) {
          keep[d] = random() < wordDropout ? 0 : 1;
        }
      }
      let n = 0;
      let group = 0;
      for (let x = w0; x < w1; x++, group++) {
        if (drop && keep[group] === 0) continue;
        const w = words[x]!;
        for (let e = entryStart[w]!; e < entryStart[w + 1]!; e++) {
          bases[n] = entryRows[e]! * k;
          vals[n] = entryValues[e]!;
          n++;
        }
      }
      for (let x = b0; x < b1; x++) {
        const r = bigramRows[x]!;
        if (r < 0) continue;
        if (drop && keep[group++] === 0) continue;
        bases[n] = r * k;
        vals[n] = bigramValue;
        n++;
      }
      for (let j = 0; j < k; j++) logits[j] = bias[j]!;
      for (let t = 0; t < n; t++) {
        const base = bases[t]!;
        const v = vals[t]!;
        for (let j = 0; j < k; j++) logits[j]! += v * weights[base + j]!;
      }
      let max = -Infinity;
      for (let j = 0; j < k; j++) if (logits[j]! > max) max = logits[j]!;
      let sum = 0;
      for (let j = 0; j < k; j++) {
        const e = Math.exp(logits[j]! - max);
        g[j] = e;
        sum += e;
      }
      const y = labels[i]!;
      let na = 0;
      for (let j = 0; j < k; j++) {
        const gj = g[j]! / sum - (j === y ? 1 : 0);
        g[j] = gj;
        if (gj > minGradient || gj < -minGradient) active[na++] = j;
      }
      for (let t = 0; t < n; t++) {
        const base = bases[t]!;
        const v = vals[t]!;
        for (let a = 0; a < na; a++) {
          const j = active[a]!;
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
    tick?.(epoch, done);
    if (afterEpoch?.(epoch, model) === false) break;
  }
  return model;
}
