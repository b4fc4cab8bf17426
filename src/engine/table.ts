/**
 * The table: per question, one weight row per hashed bucket and option, a
 * bias per option and a temperature. Scoring is a sum of rows.
 *
 * @module
 */

import {
  type FeaturizerSettings,
  type TextFeatures,
  wordBucketsOf,
} from "./features.ts";

/** A choice among options, or a yes/no question. */
export type QuestionKind = "choice" | "yes_no";

/** Option names of a yes/no question, in table order: yes first. */
export const YES_NO_OPTIONS: readonly string[] = ["true", "false"];

/** What calibration decided for a question. */
export interface Calibration {
  /** `calibrated` when a threshold passed the finite-sample test. */
  status: "calibrated" | "uncalibrated";
  /** Lowest confidence that is certified; null when uncalibrated. */
  threshold: number | null;
  /** Target disagreement rate among certified answers. */
  alpha: number;
  /** Allowed probability that the target fails. */
  delta: number;
  /** Why the question is uncalibrated, in words; null when calibrated. */
  reason: string | null;
}

/** What the drift guard needs of a question, computed at training. */
export interface DriftReference {
  /** Drift scores of the calibration texts, sorted ascending. */
  scores: Float32Array;
  /** Novelty shares of the calibration texts, sorted ascending. */
  novelty: Float32Array;
}

/** One trained question. */
export interface QuestionTable {
  name: string;
  kind: QuestionKind;
  /** Option names; for yes/no, `YES_NO_OPTIONS`. */
  options: string[];
  /** `rows × options.length` weights, row-major. */
  weights: Float32Array;
  /** One bias per option. */
  bias: Float32Array;
  /** Logits are divided by this before the softmax. */
  temperature: number;
  calibration: Calibration;
  /**
   * Per ordered option pair `(a, b)` at `a * K + b`: the most one inserted
   * word's own buckets (its word row plus its n-gram average) can raise
   * `score[b] - score[a]`.
   */
  wordGain: Float32Array;
  /** Likewise for one new bigram bucket. */
  bigramGain: Float32Array;
  drift: DriftReference;
  /** Option name to index. */
  optionIndex: Map<string, number>;
}

/** What scoring needs of a question: its options, weights and bias. */
export type QuestionWeights = Pick<
  QuestionTable,
  "options" | "weights" | "bias"
>;

/** Settings chosen at training that change how answers are certified. */
export interface TableSettings {
  /** Minimum radius for certification when a request is `exposed`. */
  min_radius: number;
  /** Serve answers over offered options the table never learned. */
  serve_new_options: boolean;
  /** Per question, a confidence above which uncertified answers are served. */
  force_thresholds: Record<string, number>;
  /** Drift guard settings. */
  drift: DriftSettings;
}

/** How the drift guard judges single texts and streams. */
export interface DriftSettings {
  /**
   * A single text whose novelty (share of buckets unseen in training) has a
   * conformal p-value at or below this, against the calibration texts'
   * novelty, is not certified. Costs at most this share of in-domain texts.
   */
  single_p: number;
  /** A single text with a larger share of buckets unseen in training is not certified. */
  max_novelty: number;
  /**
   * The `single_p` rule applies only to texts with at least this share of
   * unseen buckets, so that in a repetitive domain one new word is no alarm.
   */
  min_novelty: number;
  /** The online alarm is raised when the test martingale reaches 1/delta. */
  delta: number;
  /** Requests of normal traffic needed to clear an alarm. */
  rearm_window: number;
}

/** A loaded table: everything needed to answer, shared by all questions. */
export interface Table {
  featurizer: FeaturizerSettings;
  settings: TableSettings;
  /** Bucket to row, -1 for a bucket no training text had. */
  rowOf: Int32Array;
  rowCount: number;
  questions: QuestionTable[];
  byName: Map<string, QuestionTable>;
  /** What answering has learnt about the words met so far. */
  words: WordCache;
  /** Free-form facts about the bundle (format and tool versions, report). */
  info: Record<string, unknown>;
}

/** What a table keeps about one word it has met. */
export interface WordEntry {
  /** The whole-word bucket first, then the distinct n-gram buckets. */
  readonly buckets: readonly number[];
  /** How many of `buckets` no training text had. */
  readonly unseen: number;
  /**
   * Per question, by its position in the table, the word's vector once
   * computed. Plain arrays: their numbers sit in the JavaScript heap next to
   * the entry, not in a separate buffer, which saves cache misses on a cold
   * request.
   */
  readonly vectors: (readonly number[] | undefined)[];
}

/**
 * A table's memory of the words it has met: buckets, unseen count and every
 * question's word vector behind one lookup. It holds at most about
 * `budgetBytes`; past that, words are still answered but no longer kept.
 */
export class WordCache {
  readonly #entries = new Map<string, WordEntry>();
  readonly #budget: number;
  #bytes = 0;

  /** A cache that keeps about `budgetBytes` (32 MiB by default). */
  constructor(budgetBytes = 32 * 1024 * 1024) {
    this.#budget = budgetBytes;
  }

  /** Words kept. */
  get size(): number {
    return this.#entries.size;
  }

  /** Estimated bytes held. */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * The entry of `word` for `table`, made on first sight from `buckets` (or
   * from the featurizer when absent) and kept while the budget allows.
   */
  entry(
    table: Table,
    word: string,
    buckets?: readonly number[],
  ): WordEntry {
    const found = this.#entries.get(word);
    if (found !== undefined) return found;
    const b = buckets ?? wordBucketsOf(word, table.featurizer);
    let unseen = 0;
    for (let i = 0; i < b.length; i++) if (table.rowOf[b[i]!]! < 0) unseen++;
    const entry: WordEntry = { buckets: b, unseen, vectors: [] };
    // Rough V8 sizes: entry, map slot, string, bucket array.
    if (this.reserve(96 + 2 * word.length + 8 * b.length)) {
      this.#entries.set(word, entry);
    }
    return entry;
  }

  /** Counts `bytes` more as held, unless that passes the budget (then false). */
  reserve(bytes: number): boolean {
    if (this.#bytes + bytes > this.#budget) return false;
    this.#bytes += bytes;
    return true;
  }
}

/**
 * What one word adds to the scores of a question: the row of its whole form
 * plus its n-gram rows divided by `max(n, ngram_average_min)` (unseen buckets
 * count as zero rows). Summed in float32, as the weights are stored.
 */
export function wordVector(
  table: Table,
  q: QuestionWeights,
  buckets: readonly number[],
): number[] {
  // Every step rounds to float32 (`Math.fround`), exactly as summing into a
  // Float32Array would, without a buffer outside the heap per word.
  const k = q.options.length;
  const v: number[] = new Array(k);
  for (let j = 0; j < k; j++) v[j] = 0;
  const { rowOf } = table;
  const w = q.weights;
  for (let i = 1; i < buckets.length; i++) {
    const r = rowOf[buckets[i]!]!;
    if (r < 0) continue;
    const base = r * k;
    for (let j = 0; j < k; j++) v[j] = Math.fround(v[j]! + w[base + j]!);
  }
  const divisor = Math.max(
    buckets.length - 1,
    table.featurizer.ngram_average_min,
  );
  if (divisor > 1) {
    const scale = 1 / divisor;
    for (let j = 0; j < k; j++) v[j] = Math.fround(v[j]! * scale);
  }
  const r = rowOf[buckets[0]!]!;
  if (r >= 0) {
    const base = r * k;
    for (let j = 0; j < k; j++) v[j] = Math.fround(v[j]! + w[base + j]!);
  }
  return v;
}

/**
 * The vector of a word entry for question `q`, kept in the entry when `q`
 * belongs to the table and the cache has room.
 */
export function entryVector(
  table: Table,
  q: QuestionTable,
  slot: number,
  entry: WordEntry,
): readonly number[] {
  const cached = slot < 0 ? undefined : entry.vectors[slot];
  if (cached !== undefined) return cached;
  const v = wordVector(table, q, entry.buckets);
  if (slot >= 0 && table.words.reserve(48 + 8 * v.length)) {
    entry.vectors[slot] = v;
  }
  return v;
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
 * Raw scores of every option for a text whose words have entries in the
 * table's cache (`entries[i]` for `f.words[i]`): the same numbers as
 * `scoreText`, with word vectors kept between texts.
 */
export function scoreEntries(
  table: Table,
  q: QuestionTable,
  f: TextFeatures,
  entries: readonly WordEntry[],
  out: Float64Array = new Float64Array(q.options.length),
): Float64Array {
  const k = q.options.length;
  const slot = table.questions.indexOf(q);
  for (let j = 0; j < k; j++) out[j] = q.bias[j]!;
  for (let i = 0; i < entries.length; i++) {
    const v = entryVector(table, q, slot, entries[i]!);
    for (let j = 0; j < k; j++) out[j]! += v[j]!;
  }
  addBigramRows(table, q, f.bigramBuckets, out);
  return out;
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

/** Index of the largest value (the first one on ties). */
export function argmax(values: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) {
    if (values[i]! > values[best]!) best = i;
  }
  return best;
}

/**
 * Share of a text's buckets (word and bigram) that no training text had:
 * 0 for a text made only of familiar pieces, 1 for one made of none.
 */
export function noveltyOf(table: Table, f: TextFeatures): number {
  let total = 0;
  let unseen = 0;
  const { rowOf } = table;
  for (const buckets of f.wordBuckets) {
    total += buckets.length;
    for (let i = 0; i < buckets.length; i++) {
      if (rowOf[buckets[i]!]! < 0) unseen++;
    }
  }
  return noveltyShare(table, f, total, unseen);
}

/**
 * The novelty of a text whose words hold `wordBuckets` buckets, `wordUnseen`
 * of them without a row: its bigrams are counted here.
 */
export function noveltyShare(
  table: Table,
  f: TextFeatures,
  wordBuckets: number,
  wordUnseen: number,
): number {
  const bg = f.bigramBuckets;
  let unseen = wordUnseen;
  for (let i = 0; i < bg.length; i++) if (table.rowOf[bg[i]!]! < 0) unseen++;
  const total = wordBuckets + bg.length;
  return total === 0 ? 1 : unseen / total;
}
