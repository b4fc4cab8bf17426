/**
 * Scoring a text with a table: each distinct word's vector (its whole
 * form's row plus its n-gram rows averaged), the bigram rows and the bias
 * summed per option, kept in the caller's word cache between texts; the
 * softmax and argmax over the scores, and a text's share of unseen
 * buckets.
 *
 * @module
 */

import type { TextFeatures } from "./features.ts";
import type { TableState } from "./state.ts";
import type { QuestionTable, QuestionWeights, Table } from "./table.ts";

/**
 * What one word adds to the scores of a question: the row of its whole form
 * plus its n-gram rows divided by `max(n, ngram_average_min)` (unseen buckets
 * count as zero rows), written to `dest[at, at + K)`. The word's buckets are
 * `buckets[from, to)`, the whole form first. Summed in float32, as the
 * weights are stored.
 */
export function writeWordVector(
  table: Table,
  q: QuestionWeights,
  buckets: ArrayLike<number>,
  dest: Float32Array,
  at: number,
  from = 0,
  to: number = buckets.length,
): void {
  // Every step rounds to float32 (the destination stores float32), so a kept
  // vector and a fresh one are the same numbers.
  const k = q.options.length;
  dest.fill(0, at, at + k);
  const { rowOf } = table;
  const w = q.weights;
  for (let i = from + 1; i < to; i++) {
    const r = rowOf[buckets[i]!]!;
    if (r < 0) continue;
    const base = r * k;
    for (let j = 0; j < k; j++) dest[at + j]! += w[base + j]!;
  }
  const divisor = Math.max(
    to - from - 1,
    table.featurizer.ngram_average_min,
  );
  if (divisor > 1) {
    const scale = 1 / divisor;
    for (let j = 0; j < k; j++) dest[at + j]! *= scale;
  }
  const r = rowOf[buckets[from]!]!;
  if (r >= 0) {
    const base = r * k;
    for (let j = 0; j < k; j++) dest[at + j]! += w[base + j]!;
  }
}

/** The vector `writeWordVector` computes, as a fresh array. */
export function wordVector(
  table: Table,
  q: QuestionWeights,
  buckets: readonly number[],
): number[] {
  const v = new Float32Array(q.options.length);
  writeWordVector(table, q, buckets, v, 0);
  return Array.from(v);
}

/**
 * A word of a prepared text: its id in a `TableState`'s word cache, or -1 when
 * the cache has no room for it (its buckets then travel with the text).
 */
export type WordRef = number;

/** How many of `buckets` no training text had. */
export function unseenBuckets(
  table: Table,
  buckets: readonly number[],
): number {
  let unseen = 0;
  for (let i = 0; i < buckets.length; i++) {
    if (table.rowOf[buckets[i]!]! < 0) unseen++;
  }
  return unseen;
}

/** Adds the row of each distinct bigram bucket a training text had to `out`. */
function addBigramRows(
  table: Table,
  q: QuestionWeights,
  bigrams: readonly number[],
  out: Float64Array,
): void {
  const k = q.options.length;
  const { rowOf } = table;
  const w = q.weights;
  for (let i = 0; i < bigrams.length; i++) {
    const r = rowOf[bigrams[i]!]!;
    if (r < 0) continue;
    const base = r * k;
    for (let j = 0; j < k; j++) out[j]! += w[base + j]!;
  }
}

/**
 * Raw scores of every option for a text whose words have references in the
 * word cache of `state` (`entries[i]` for `f.words[i]`, -1 for a word it does
 * not keep): the same numbers as `scoreText`, with word vectors kept
 * between texts while the cache has room.
 */
export function scoreEntries(
  table: Table,
  state: TableState,
  q: QuestionTable,
  f: TextFeatures,
  entries: readonly WordRef[],
  out: Float64Array = new Float64Array(q.options.length),
): Float64Array {
  return scoreWords(
    table,
    state,
    q,
    entries,
    f.wordBuckets,
    f.bigramBuckets,
    out,
  );
}

/**
 * `scoreEntries` for a text given by its word references, the buckets of
 * the words the cache does not keep (`loose[i]` for `entries[i] === -1`;
 * others may be null) and its bigram buckets.
 */
export function scoreWords(
  table: Table,
  state: TableState,
  q: QuestionTable,
  entries: readonly WordRef[],
  loose: readonly (readonly number[] | null)[],
  bigrams: readonly number[],
  out: Float64Array,
): Float64Array {
  const k = q.options.length;
  const { words } = state;
  const qs = state.question(q);
  const slot = qs.vectorSlot;
  // Where each word's vector is: in the arena, or made afresh in `spare`.
  const offsets = qs.offsets.length >= entries.length
    ? qs.offsets
    : (qs.offsets = new Int32Array(2 * entries.length));
  let n = 0;
  for (let j = 0; j < k; j++) out[j] = q.bias[j]!;
  for (let i = 0; i < entries.length; i++) {
    const id = entries[i]!;
    let at = id < 0 ? -1 : words.vectorAt(id, slot);
    if (id >= 0 && at < 0) {
      at = words.reserveVector(id, slot, k);
      if (at >= 0) {
        writeWordVector(
          table,
          q,
          words.bucketStore,
          words.arena,
          at,
          words.bucketsStart(id),
          words.bucketsEnd(id),
        );
      }
    }
    if (at >= 0) offsets[n++] = at;
    else {
      // No room to keep it: add what is gathered so far, then this one.
      addArenaRows(words.arena, offsets, n, k, out);
      n = 0;
      if (id >= 0) {
        writeWordVector(
          table,
          q,
          words.bucketStore,
          qs.wordVector,
          0,
          words.bucketsStart(id),
          words.bucketsEnd(id),
        );
      } else writeWordVector(table, q, loose[i]!, qs.wordVector, 0);
      for (let j = 0; j < k; j++) out[j]! += qs.wordVector[j]!;
    }
  }
  addArenaRows(words.arena, offsets, n, k, out);
  // The bigram rows, gathered the same way.
  const rows = offsets.length >= bigrams.length
    ? offsets
    : (qs.offsets = new Int32Array(2 * bigrams.length));
  let m = 0;
  for (let i = 0; i < bigrams.length; i++) {
    const r = table.rowOf[bigrams[i]!]!;
    if (r >= 0) rows[m++] = r * k;
  }
  addArenaRows(q.weights, rows, m, k, out);
  return out;
}

/**
 * Adds the `n` vectors of `k` floats at `offsets` in `arena` (the word
 * cache's arena, or a question's weights) to `out`, one
 * option at a time: each option's sum takes the vectors in the same order
 * as adding them one by one would, so the result is the same to the bit,
 * with one pass over `out` instead of `n`.
 */
function addArenaRows(
  arena: Float32Array,
  offsets: Int32Array,
  n: number,
  k: number,
  out: Float64Array,
): void {
  if (n === 0) return;
  for (let j = 0; j < k; j++) {
    let sum = out[j]!;
    for (let i = 0; i < n; i++) sum += arena[offsets[i]! + j]!;
    out[j] = sum;
  }
}

/**
 * Raw scores (logits before temperature) of every option for a text: bias,
 * plus the averaged row of each distinct word, plus each distinct bigram row.
 * Word vectors are computed afresh; `scoreEntries` keeps them.
 */
export function scoreText(
  table: Table,
  q: QuestionWeights,
  f: TextFeatures,
  out: Float64Array = new Float64Array(q.options.length),
): Float64Array {
  const k = q.options.length;
  for (let j = 0; j < k; j++) out[j] = q.bias[j]!;
  for (let i = 0; i < f.words.length; i++) {
    const v = wordVector(table, q, f.wordBuckets[i]!);
    for (let j = 0; j < k; j++) out[j]! += v[j]!;
  }
  addBigramRows(table, q, f.bigramBuckets, out);
  return out;
}

/**
 * Softmax of `logits / temperature` over the options listed in `subset`
 * (all when absent), written to `out` when given (it must have one entry per
 * listed option).
 */
export function softmax(
  logits: Float64Array,
  temperature: number,
  subset?: readonly number[],
  out?: Float64Array,
): Float64Array {
  const n = subset === undefined ? logits.length : subset.length;
  const p = out ?? new Float64Array(n);
  let max = -Infinity;
  for (let t = 0; t < n; t++) {
    const v = logits[subset === undefined ? t : subset[t]!]! / temperature;
    p[t] = v;
    if (v > max) max = v;
  }
  let sum = 0;
  for (let t = 0; t < n; t++) {
    const e = Math.exp(p[t]! - max);
    p[t] = e;
    sum += e;
  }
  for (let t = 0; t < n; t++) p[t]! /= sum;
  return p;
}

/** Index of the largest of the first `n` values (all by default; the first one on ties). */
export function argmax(
  values: ArrayLike<number>,
  n: number = values.length,
): number {
  let best = 0;
  for (let i = 1; i < n; i++) {
    if (values[i]! > values[best]!) best = i;
  }
  return best;
}

/**
 * The novelty of a text whose words hold `wordBuckets` buckets, `wordUnseen`
 * of them without a row: its bigrams are counted here.
 */
export function noveltyShare(
  table: Table,
  f: Pick<TextFeatures, "bigramBuckets">,
  wordBuckets: number,
  wordUnseen: number,
): number {
  const bg = f.bigramBuckets;
  let unseen = wordUnseen;
  for (let i = 0; i < bg.length; i++) if (table.rowOf[bg[i]!]! < 0) unseen++;
  const total = wordBuckets + bg.length;
  return total === 0 ? 1 : unseen / total;
}
