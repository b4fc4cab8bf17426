/**
 * The table: per question, one weight row per hashed bucket and option, a
 * bias per option and a temperature. Scoring is a sum of rows.
 *
 * @module
 */

import type { FeaturizerSettings, TextFeatures } from "./features.ts";
import type { CalibrationBand } from "./feedback_check.ts";
import type { ScopeReference } from "./scope.ts";
import type { SemanticTier } from "./semantic.ts";
import type { TableState } from "./state.ts";

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
  /**
   * Candidate thresholds for the live certificate, strictest first (the
   * bundle's threshold among them): taken from the grid calibration
   * tested, fixed before any calibration label was read. Empty in bundles
   * of format version 1.
   */
  candidates: number[];
  /**
   * Per live candidate (strictest first, as `liveGrid` spreads them), the
   * calibration answers whose confidence reaches it but not the next
   * stricter one, and their disagreements: what the live feedback is
   * checked against (`feedback_check.ts`). Absent in bundles trained
   * before it was written (their threshold is then never lowered live).
   */
  bands?: CalibrationBand[];
}

/** What the drift guard needs of a question, computed at training. */
export interface DriftReference {
  /** Drift scores of the calibration texts, sorted ascending. */
  scores: Float32Array;
  /** Novelty shares of the calibration texts, sorted ascending. */
  novelty: Float32Array;
  /**
   * What the out-of-scope rule compares a text with (see `scope.ts`): the
   * calibration texts' spreads (format 3) or energies (format 2), sorted
   * ascending; empty where the rule is off (format 1, and questions of two
   * options in format 3).
   */
  scope: ScopeReference;
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
  /**
   * The second tier (format 4, see `semantic.ts`): with the threshold in
   * force set to its `calibration.threshold`, asked when the table's only
   * failing rule is `low_confidence`; absent for the table alone.
   */
  semantic?: SemanticTier;
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
  /**
   * The online alarm is raised when the test martingale reaches 2/delta
   * (half of delta covers the calibration draw, half Ville's inequality).
   */
  delta: number;
  /** Requests of normal traffic needed to clear an alarm. */
  rearm_window: number;
  /**
   * A single text whose answer is spread over the options (or, in format 2
   * bundles, carries as little evidence) as few calibration texts' are
   * (conformal p-value at or below this, see `scope.ts`) is not certified:
   * it looks like none of the options, or like nothing the table was
   * calibrated on. Costs at most this share of texts like the calibration
   * ones; 0 turns it off.
   */
  scope_p: number;
}

/**
 * A loaded table: everything needed to answer, shared by all questions.
 * Constant once loaded: what answering keeps between texts (the word
 * cache, scratch buffers, the threshold in force) is the caller's
 * `TableState`, passed to every call beside the table.
 */
export interface Table {
  readonly featurizer: FeaturizerSettings;
  readonly settings: TableSettings;
  /** Bucket to row, -1 for a bucket no training text had. */
  readonly rowOf: Int32Array;
  readonly rowCount: number;
  readonly questions: QuestionTable[];
  readonly byName: Map<string, QuestionTable>;
  /**
   * What the table knows about its bundle (format and tool versions, id,
   * training settings, report), as the codec or the trainer wrote it; the
   * engine reads none of it. `bundleInfo()` in `train/` reads it typed.
   */
  readonly info: TableInfo;
}

/**
 * The shape of `Table.info` as far as the engine knows it: a record the
 * bundle's codec and the trainer fill (`BundleInfo` in `train/bundle_info.ts`
 * says what each field holds). Kept apart so that the engine imports
 * nothing of training or bundles.
 */
export interface TableInfo {
  readonly format?: string;
  readonly format_version?: number;
  readonly tool_version?: string;
  readonly bundle_id?: string | null;
  readonly training?: object | null;
  readonly report?: object | null;
}

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
