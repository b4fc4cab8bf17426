/**
 * Radius: a sound lower bound on the number of inserted words that can
 * change the table's answer.
 *
 * Inserting one word between two tokens can (1) add a new word's word row
 * and its n-gram rows with weights summing to at most 1 (divided by
 * `max(n, ngram_average_min)`), which moves `score[b] - score[a]` by at most
 * `wordGain[a, b]`: the largest word-row gain plus the largest n-gram-row
 * gain, or 0 (a weighted sum with weights totalling at most 1 never exceeds
 * the largest positive term, and unseen buckets add 0);
 * (2) add at most two new bigrams, each worth at most `bigramGain[a, b]`;
 * (3) break at most one bigram of the text, worth at most the largest
 * `score[a] - score[b]` contribution among the text's present bigrams.
 * Presence features make repeated insertions worth no more. So `k` words move
 * the gap by at most `k` times that per-word gain, and the answer `a` cannot
 * lose to `b` with fewer than `ceil(margin / gain)` words.
 *
 * @module
 */

import type { TextFeatures } from "./features.ts";
import type { QuestionTable, Table } from "./table.ts";

/** Per ordered option pair, the gain bounds of one word's buckets and of one bigram. */
export interface GainBounds {
  wordGain: Float32Array;
  bigramGain: Float32Array;
}

/** Row kinds for `computeGainBounds`. */
export const WORD_ROW = 0;
export const NGRAM_ROW = 1;
export const BIGRAM_ROW = 2;

/**
 * Computes, from a question's weights, the most one word's buckets (its
 * word row plus the average of its n-gram rows, bounded by the largest
 * n-gram row) and one bigram bucket can raise `score[b] - score[a]`, for
 * every ordered pair. `rowKinds[r]` is `WORD_ROW`, `NGRAM_ROW` or `BIGRAM_ROW`.
 */
export function computeGainBounds(
  weights: Float32Array,
  optionCount: number,
  rowKinds: Uint8Array,
): GainBounds {
  const k = optionCount;
  const rows = rowKinds.length;
  const byKind = [
    new Float32Array(k * k),
    new Float32Array(k * k),
    new Float32Array(k * k),
  ];
  for (let r = 0; r < rows; r++) {
    const base = r * k;
    const target = byKind[rowKinds[r]!]!;
    for (let a = 0; a < k; a++) {
      const wa = weights[base + a]!;
      const row = a * k;
      for (let b = 0; b < k; b++) {
        const d = weights[base + b]! - wa;
        if (d > target[row + b]!) target[row + b] = d;
      }
    }
  }
  const [word, ngram, bigramGain] = byKind as [
    Float32Array,
    Float32Array,
    Float32Array,
  ];
  const wordGain = new Float32Array(k * k);
  for (let i = 0; i < wordGain.length; i++) wordGain[i] = word[i]! + ngram[i]!;
  // Float32 storage rounds; round the bounds up so they stay bounds.
  for (const g of [wordGain, bigramGain]) {
    for (let i = 0; i < g.length; i++) {
      if (g[i]! > 0) g[i] = g[i]! * (1 + 1e-6) + 1e-7;
    }
  }
  return { wordGain, bigramGain };
}

/**
 * The radius of answer `a` for a text with raw scores `logits`: the least
 * number of inserted words that could make another option score at least as
 * high, or null when no number of words can. `rivals` limits the options
 * that may overtake `a` (the offered ones when a request narrows).
 */
export function radiusOf(
  table: Table,
  q: QuestionTable,
  f: TextFeatures,
  logits: Float64Array,
  a: number,
  rivals?: readonly number[],
): number | null {
  const k = q.options.length;
  const { rowOf } = table;
  const w = q.weights;
  // Rows of the text's bigrams, looked up once.
  const bg = f.bigramBuckets;
  const rows: number[] = [];
  for (let i = 0; i < bg.length; i++) {
    const r = rowOf[bg[i]!]!;
    if (r >= 0) rows.push(r * k);
  }
  let best = Infinity;
  const count = rivals?.length ?? k;
  for (let t = 0; t < count; t++) {
    const b = rivals === undefined ? t : rivals[t]!;
    if (b === a) continue;
    let removal = 0;
    for (let i = 0; i < rows.length; i++) {
      const d = w[rows[i]! + a]! - w[rows[i]! + b]!;
      if (d > removal) removal = d;
    }
    const gain = q.wordGain[a * k + b]! + 2 * q.bigramGain[a * k + b]! +
      removal * (1 + 1e-6);
    if (gain <= 0) continue;
    const margin = logits[a]! - logits[b]!;
    const words = Math.max(1, Math.ceil(margin / gain - 1e-9));
    if (words < best) best = words;
  }
  return best === Infinity ? null : best;
}
