/**
 * Texts as sparse rows of the table, for training.
 *
 * @module
 */

import type { TextFeatures } from "../engine/features.ts";

/**
 * Compressed sparse rows: text `i` has `(rows[j], values[j])` for `j` in
 * `[offsets[i], offsets[i + 1])`; `groups[j]` numbers the word or bigram
 * the entry comes from, within its text (the unit of word dropout).
 */
export interface SparseTexts {
  offsets: Int32Array;
  rows: Int32Array;
  values: Float32Array;
  groups: Int32Array;
}

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
 * Lays texts out as table rows, as scoring reads them: each distinct word
 * adds its word row and its n-gram rows divided by `max(n, ngramAverageMin)`,
 * each bigram adds its row; every entry times its kind's training scale.
 * Buckets without a row are dropped (they score 0).
 */
export function toSparse(
  features: readonly TextFeatures[],
  rowOf: Int32Array,
  ngramAverageMin: number,
  scales: KindScales = DEFAULT_KIND_SCALES,
): SparseTexts {
  const offsets = new Int32Array(features.length + 1);
  let total = 0;
  for (const f of features) {
    for (const b of f.wordBuckets) total += b.length;
    total += f.bigramBuckets.length;
  }
  const rows = new Int32Array(total);
  const values = new Float32Array(total);
  const groups = new Int32Array(total);
  let n = 0;
  for (let i = 0; i < features.length; i++) {
    const f = features[i]!;
    let g = 0;
    for (const buckets of f.wordBuckets) {
      const share = scales.ngram /
        Math.max(1, buckets.length - 1, ngramAverageMin);
      for (let j = 0; j < buckets.length; j++) {
        const r = rowOf[buckets[j]!]!;
        if (r < 0) continue;
        rows[n] = r;
        values[n] = j === 0 ? scales.word : share;
        groups[n] = g;
        n++;
      }
      g++;
    }
    for (let j = 0; j < f.bigramBuckets.length; j++) {
      const r = rowOf[f.bigramBuckets[j]!]!;
      if (r < 0) continue;
      rows[n] = r;
      values[n] = scales.bigram;
      groups[n] = g++;
      n++;
    }
    offsets[i + 1] = n;
  }
  return {
    offsets,
    rows: rows.slice(0, n),
    values: values.slice(0, n),
    groups: groups.slice(0, n),
  };
}

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
