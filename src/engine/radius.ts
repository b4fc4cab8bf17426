/**
 * Radius: a sound lower bound on the number of inserted words that can
 * change the table's answer.
 *
 * Inserting one word between two tokens can (1) add a new word's word row
 * and its `n` distinct n-gram rows divided by `max(n, ngram_average_min)`,
 * which moves `score[b] - score[a]` by at most `wordGain[a, b]`: the largest
 * word-row gain plus the mean of the `ngram_average_min` largest n-gram-row
 * gains (computed at training: `src/train/gain_bounds.ts`; unseen buckets add 0);
 * (2) add at most two new bigrams, each worth at most `bigramGain[a, b]`;
 * (3) break at most one bigram of the text, worth at most the largest
 * `score[a] - score[b]` contribution among the text's present bigrams
 * (bounded, to keep this cheap, by the bigram's weight for `a` minus its
 * smallest weight over all options).
 * Presence features make repeated insertions worth no more. So `k` words move
 * the gap by at most `k` times that per-word gain, and the answer `a` cannot
 * lose to `b` with fewer than `ceil(margin / gain)` words. When no inserted
 * word's own rows can help `b` at all, only broken bigrams can, each at most
 * once: `b` then needs the largest of them to add up to the margin, and can
 * never win when all of them together fall short.
 *
 * @module
 */

import type { TextFeatures } from "./features.ts";
import type { TableState } from "./state.ts";
import type { QuestionTable, Table } from "./table.ts";

/** Per ordered option pair, the gain bounds of one word's buckets and of one bigram. */
export interface GainBounds {
  wordGain: Float32Array;
  bigramGain: Float32Array;
}

/** Row kinds for the gain bounds (`src/train/gain_bounds.ts` computes them at training). */
export const WORD_ROW = 0;
export const NGRAM_ROW = 1;
export const BIGRAM_ROW = 2;

/**
 * The radius of answer `a` for a text with raw scores `logits`: the least
 * number of inserted words that could make another option score at least as
 * high, or null when no number of words can. `rivals` limits the options
 * that may overtake `a` (the offered ones when a request narrows). `state`
 * is the table's, holding its row minima.
 */
export function radiusOf(
  table: Table,
  state: TableState,
  q: QuestionTable,
  f: Pick<TextFeatures, "bigramBuckets">,
  logits: Float64Array,
  a: number,
  rivals?: readonly number[],
): number | null {
  const k = q.options.length;
  const { rowOf } = table;
  const w = q.weights;
  // Per row, its smallest weight: computed once per question by the state.
  const minima = state.question(q).rowMinima;
  // The most breaking one of the text's bigrams can take from the answer
  // against any rival: its weight for `a` minus its smallest weight.
  const bg = f.bigramBuckets;
  let removal = 0;
  for (let i = 0; i < bg.length; i++) {
    const r = rowOf[bg[i]!]!;
    if (r < 0) continue;
    const d = w[r * k + a]! - minima[r]!;
    if (d > removal) removal = d;
  }
  removal *= 1 + 1e-6;
  let best = Infinity;
  const count = rivals?.length ?? k;
  for (let t = 0; t < count; t++) {
    const b = rivals === undefined ? t : rivals[t]!;
    if (b === a) continue;
    const margin = logits[a]! - logits[b]!;
    const perWord = q.wordGain[a * k + b]! + 2 * q.bigramGain[a * k + b]!;
    let words: number;
    if (perWord > 0) {
      // Each word adds at most perWord and breaks at most one bigram.
      words = Math.ceil(margin / (perWord + removal) - 1e-9);
    } else {
      // Inserted words can only break bigrams, each at most once: the
      // rival needs the largest removals to add up to the margin.
      const gains: number[] = [];
      for (let i = 0; i < bg.length; i++) {
        const r = rowOf[bg[i]!]!;
        if (r < 0) continue;
        const d = w[r * k + a]! - w[r * k + b]!;
        if (d > 0) gains.push(d * (1 + 1e-6));
      }
      gains.sort((x, y) => y - x);
      let sum = 0;
      words = 0;
      while (sum < margin - 1e-12 && words < gains.length) {
        sum += gains[words++]!;
      }
      if (sum < margin - 1e-12) continue;
    }
    words = Math.max(1, words);
    if (words < best) best = words;
  }
  return best === Infinity ? null : best;
}
