/**
 * Per-kind feature scales: how training weighs word, n-gram and bigram rows,
 * and how the trained weights are stored for serving.
 *
 * @module
 */

/**
 * Training-time scale of each row kind. Under AdaGrad a feature's value acts
 * as its own learning rate; the scales are multiplied into the stored
 * weights by `storedWeights`, so serving never sees them.
 */
export interface KindScales {
  word: number;
  ngram: number;
  bigram: number;
}

/** Scales that trained best on held-out data (see the README). */
export const DEFAULT_KIND_SCALES: KindScales = {
  word: 0.3,
  ngram: 2,
  bigram: 0.3,
};

/**
 * The weights a table stores: each row times its kind's training scale, so
 * that scoring with unit feature values gives the trained scores.
 * `rowKinds[r]` is 0 (word), 1 (n-gram) or 2 (bigram), as in `radius.ts`.
 */
export function storedWeights(
  weights: Float32Array,
  k: number,
  rowKinds: Uint8Array,
  scales: KindScales = DEFAULT_KIND_SCALES,
): Float32Array {
  const out = new Float32Array(weights.length);
  const byKind = [scales.word, scales.ngram, scales.bigram];
  for (let r = 0; r < rowKinds.length; r++) {
    const s = byKind[rowKinds[r]!]!;
    for (let j = r * k; j < (r + 1) * k; j++) out[j] = weights[j]! * s;
  }
  return out;
}
