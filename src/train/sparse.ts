/**
 * Texts as sparse rows of the table, for training.
 *
 * @module
 */

import type { TextFeatures } from "../engine/features.ts";

/** Compressed sparse rows: text `i` has `(rows[j], values[j])` for `j` in `[offsets[i], offsets[i + 1])`. */
export interface SparseTexts {
  offsets: Int32Array;
  rows: Int32Array;
  values: Float32Array;
}

/**
 * Lays texts out as table rows, exactly as scoring reads them: each distinct
 * word adds 1 to its word row and `1 / n` to each of its `n` n-gram rows,
 * each bigram adds 1.
 * Buckets without a row are dropped (they score 0).
 */
export function toSparse(
  features: readonly TextFeatures[],
  rowOf: Int32Array,
): SparseTexts {
  const offsets = new Int32Array(features.length + 1);
  const rows: number[] = [];
  const values: number[] = [];
  const acc = new Map<number, number>();
  for (let i = 0; i < features.length; i++) {
    const f = features[i]!;
    acc.clear();
    for (const buckets of f.wordBuckets) {
      const share = 1 / Math.max(1, buckets.length - 1);
      for (let j = 0; j < buckets.length; j++) {
        const r = rowOf[buckets[j]!]!;
        if (r >= 0) acc.set(r, (acc.get(r) ?? 0) + (j === 0 ? 1 : share));
      }
    }
    for (let j = 0; j < f.bigramBuckets.length; j++) {
      const r = rowOf[f.bigramBuckets[j]!]!;
      if (r >= 0) acc.set(r, (acc.get(r) ?? 0) + 1);
    }
    for (const [r, v] of acc) {
      rows.push(r);
      values.push(v);
    }
    offsets[i + 1] = rows.length;
  }
  return {
    offsets,
    rows: Int32Array.from(rows),
    values: Float32Array.from(values),
  };
}
