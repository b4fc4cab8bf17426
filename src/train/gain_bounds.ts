/**
 * The gain bounds the radius reads (`src/engine/radius.ts`), computed once
 * per question at training from its weights and stored in the bundle:
 * training code, so the engine keeps only what serving needs.
 *
 * @module
 */

import {
  BIGRAM_ROW,
  type GainBounds,
  NGRAM_ROW,
  WORD_ROW,
} from "../engine/mod.ts";

/**
 * Computes, from a question's weights, the most one inserted word's own
 * buckets and one bigram bucket can raise `score[b] - score[a]`, for every
 * ordered pair. `rowKinds[r]` is `WORD_ROW`, `NGRAM_ROW` or `BIGRAM_ROW`;
 * `ngramAverageMin` is the featurizer's `ngram_average_min` (M).
 *
 * A word adds one word row and its `n` distinct n-gram rows divided by
 * `max(n, M)`. That n-gram part is at most the mean of the `M` largest
 * positive n-gram gains: for `n <= M` it is a sum of at most `M` distinct
 * gains over `M`; for `n > M` it is a mean of `n` distinct gains, which
 * cannot exceed the mean of the `M` largest. So the word gain is the largest
 * word-row gain plus that mean, and the bigram gain the largest bigram-row
 * gain.
 *
 * The work is rows x options^2. Beyond `workBudget` (many options), only the
 * rows with the widest spread of weights (largest minus smallest) are read
 * pair by pair; every other row of a kind can raise no pair by more than
 * the widest spread among them, which the bounds of that kind start from.
 * Still sound (never below the exact bounds), a little less tight.
 */
export function computeGainBounds(
  weights: Float32Array,
  optionCount: number,
  rowKinds: Uint8Array,
  ngramAverageMin: number,
  workBudget = GAIN_WORK_BUDGET,
): GainBounds {
  const k = optionCount;
  const pairs = k * k;
  const rows = rowKinds.length;
  const m = Math.max(1, Math.floor(ngramAverageMin));
  const { exact, skipped } = rowsToRead(weights, k, rowKinds, workBudget);
  const word = new Float64Array(pairs).fill(skipped[WORD_ROW]!);
  const bigram = new Float64Array(pairs).fill(skipped[BIGRAM_ROW]!);
  // Per pair, the m largest positive n-gram gains seen so far, and the
  // position of the smallest of them (the one to replace).
  const top = new Float64Array(pairs * m).fill(skipped[NGRAM_ROW]!);
  const smallest = new Float64Array(pairs).fill(skipped[NGRAM_ROW]!);
  const smallestAt = new Int32Array(pairs);
  for (let r = 0; r < rows; r++) {
    if (exact !== null && exact[r] === 0) continue;
    const base = r * k;
    const kind = rowKinds[r]!;
    for (let a = 0; a < k; a++) {
      const wa = weights[base + a]!;
      const row = a * k;
      for (let b = 0; b < k; b++) {
        const d = weights[base + b]! - wa;
        const pair = row + b;
        if (kind === NGRAM_ROW) {
          if (d <= smallest[pair]!) continue;
          const slots = pair * m;
          top[slots + smallestAt[pair]!] = d;
          let low = Infinity;
          let lowAt = 0;
          for (let i = 0; i < m; i++) {
            const v = top[slots + i]!;
            if (v < low) {
              low = v;
              lowAt = i;
            }
          }
          smallest[pair] = low;
          smallestAt[pair] = lowAt;
        } else {
          const target = kind === WORD_ROW ? word : bigram;
          if (d > target[pair]!) target[pair] = d;
        }
      }
    }
  }
  const wordGain = new Float32Array(pairs);
  const bigramGain = new Float32Array(pairs);
  for (let pair = 0; pair < pairs; pair++) {
    let sum = 0;
    for (let i = 0; i < m; i++) sum += top[pair * m + i]!;
    wordGain[pair] = roundUp(word[pair]! + sum / m);
    bigramGain[pair] = roundUp(bigram[pair]!);
  }
  return { wordGain, bigramGain };
}

/** Rows x options^2 that `computeGainBounds` reads pair by pair at most (a few seconds). */
export const GAIN_WORK_BUDGET = 2_000_000_000;

/**
 * Which rows `computeGainBounds` reads pair by pair (null: all of them), and
 * per row kind the widest weight spread among the others (0 when none).
 */
function rowsToRead(
  weights: Float32Array,
  k: number,
  rowKinds: Uint8Array,
  workBudget: number,
): { exact: Uint8Array | null; skipped: number[] } {
  const rows = rowKinds.length;
  const skipped = [0, 0, 0];
  const most = Math.floor(workBudget / (k * k));
  if (rows <= most) return { exact: null, skipped };
  const spread = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let lo = Infinity;
    let hi = -Infinity;
    for (let o = r * k; o < (r + 1) * k; o++) {
      const w = weights[o]!;
      if (w < lo) lo = w;
      if (w > hi) hi = w;
    }
    spread[r] = hi - lo;
  }
  const order = Array.from(spread.keys()).sort((a, b) =>
    spread[b]! - spread[a]! || a - b
  );
  const exact = new Uint8Array(rows);
  order.forEach((r, at) => {
    if (at < most) exact[r] = 1;
    else skipped[rowKinds[r]!] = Math.max(skipped[rowKinds[r]!]!, spread[r]!);
  });
  return { exact, skipped };
}

/** A float32 no smaller than a positive bound (storage must not shrink a bound). */
function roundUp(x: number): number {
  return x > 0 ? x * (1 + 1e-6) + 1e-7 : 0;
}
