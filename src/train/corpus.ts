/**
 * Training texts in compact form: each distinct text featurised once, each
 * distinct word's buckets stored once.
 *
 * A million traces as `TextFeatures` objects and per-text sparse rows (about
 * 150 entries of row, value and group each) would take gigabytes. Here a
 * trace is one number (its distinct text), a text is its word ids and bigram
 * buckets (about 20 numbers), and a word's buckets are shared by every text
 * that has it. `trainingLayout` turns buckets into table rows once the train
 * split is known; the training step expands a text's word ids into rows as
 * it goes (see `softmax_sgd.ts`). Every array is a typed array, so the whole
 * layout can live in shared memory and be read by workers without copying.
 *
 * @module
 */

import {
  BIGRAM_ROW,
  bucketKind,
  type FeaturizerSettings,
  NGRAM_ROW,
  textWords,
  WORD_ROW,
  wordBucketsOf,
} from "../engine/mod.ts";
import { DEFAULT_KIND_SCALES, type KindScales } from "./kind_scales.ts";

/** Distinct texts, words and buckets of a set of traces. */
export interface Corpus {
  /** Per trace, its distinct text. */
  textOf: Int32Array;
  /** Number of distinct texts. */
  texts: number;
  /** Text `t`'s word ids are `words[wordStart[t] .. wordStart[t + 1])`, in featurisation order. */
  wordStart: Int32Array;
  words: Int32Array;
  /** Text `t`'s bigram buckets are `bigrams[bigramStart[t] .. bigramStart[t + 1])`. */
  bigramStart: Int32Array;
  bigrams: Int32Array;
  /** Word `w`'s buckets (whole word first, then n-grams) are `buckets[bucketStart[w] .. bucketStart[w + 1])`. */
  bucketStart: Int32Array;
  buckets: Int32Array;
}

/**
 * Featurises `texts` (one per trace) as serving does (`textWords`), each
 * distinct text once. `say` is told how far it got now and then.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DEFAULT_FEATURIZER } from "../engine/mod.ts";
 * import { buildCorpus } from "./corpus.ts";
 * const c = buildCorpus(["hi there", "hi there"], DEFAULT_FEATURIZER);
 * assert.equal(c.texts, 1); // both traces share one text
 * ```
 */
export function buildCorpus(
  texts: readonly string[],
  featurizer: FeaturizerSettings,
  say: (line: string) => void = () => {},
): Corpus {
  const textOf = new Int32Array(texts.length);
  const textIds = new Map<string, number>();
  const wordIds = new Map<string, number>();
  const wordStart = new Growable(Int32Array, 1024);
  const words = new Growable(Int32Array, 1 << 16);
  const bigramStart = new Growable(Int32Array, 1024);
  const bigrams = new Growable(Int32Array, 1 << 16);
  const bucketStart = new Growable(Int32Array, 1024);
  const buckets = new Growable(Int32Array, 1 << 16);
  wordStart.push(0);
  bigramStart.push(0);
  bucketStart.push(0);
  const step = Math.max(100_000, Math.ceil(texts.length / 10));
  for (let i = 0; i < texts.length; i++) {
    const text = texts[i]!;
    let t = textIds.get(text);
    if (t === undefined) {
      t = textIds.size;
      textIds.set(text, t);
      const f = textWords(text, featurizer);
      for (const word of f.words) {
        let id = wordIds.get(word);
        if (id === undefined) {
          // Each distinct word's buckets are stored once, shared by its texts.
          id = wordIds.size;
          wordIds.set(word, id);
          for (const b of wordBucketsOf(word, featurizer)) buckets.push(b);
          bucketStart.push(buckets.length);
        }
        words.push(id);
      }
      wordStart.push(words.length);
      for (const b of f.bigramBuckets) bigrams.push(b);
      bigramStart.push(bigrams.length);
    }
    textOf[i] = t;
    if ((i + 1) % step === 0 && i + 1 < texts.length) {
      say(`featurised ${i + 1} of ${texts.length} traces`);
    }
  }
  return {
    textOf,
    texts: textIds.size,
    wordStart: wordStart.done(),
    words: words.done(),
    bigramStart: bigramStart.done(),
    bigrams: bigrams.done(),
    bucketStart: bucketStart.done(),
    buckets: buckets.done(),
  };
}

/** The table's rows: which bucket each row stands for, and its kind. */
export interface TableRows {
  /** Per bucket, its row, or -1. */
  rowOf: Int32Array;
  /** Per row, its bucket. */
  rowBuckets: Int32Array;
  /** Per row, `WORD_ROW`, `NGRAM_ROW` or `BIGRAM_ROW` (see `radius.ts`). */
  rowKinds: Uint8Array;
}

/**
 * Rows of the table: every bucket a training trace's text has, in order of
 * first appearance (traces in order; per text its words' buckets, then its
 * bigrams).
 */
export function tableRows(
  corpus: Corpus,
  isTraining: (trace: number) => boolean,
  featurizer: FeaturizerSettings,
): TableRows {
  const rowOf = new Int32Array(1 << featurizer.buckets_log2).fill(-1);
  const rowBuckets = new Growable(Int32Array, 1 << 16);
  const add = (b: number) => {
    if (rowOf[b]! < 0) {
      rowOf[b] = rowBuckets.length;
      rowBuckets.push(b);
    }
  };
  const seen = new Uint8Array(corpus.texts);
  const { words, wordStart, bucketStart, buckets, bigrams, bigramStart } =
    corpus;
  for (let i = 0; i < corpus.textOf.length; i++) {
    const t = corpus.textOf[i]!;
    if (seen[t] === 1 || !isTraining(i)) continue;
    seen[t] = 1;
    for (let x = wordStart[t]!; x < wordStart[t + 1]!; x++) {
      const w = words[x]!;
      for (let y = bucketStart[w]!; y < bucketStart[w + 1]!; y++) {
        add(buckets[y]!);
      }
    }
    for (let x = bigramStart[t]!; x < bigramStart[t + 1]!; x++) {
      add(bigrams[x]!);
    }
  }
  const out = rowBuckets.done();
  const kinds = { word: WORD_ROW, ngram: NGRAM_ROW, bigram: BIGRAM_ROW };
  return {
    rowOf,
    rowBuckets: out,
    rowKinds: Uint8Array.from(out, (b) => kinds[bucketKind(b, featurizer)]),
  };
}

/**
 * What the training step reads: texts as word ids and bigram rows, words as
 * rows and values. Entries of a text, in order: for each word, its word row
 * (value `scales.word`) and n-gram rows (value `scales.ngram / max(n,
 * ngram_average_min)` for `n` n-grams), then each bigram row (value
 * `bigramValue`); buckets without a row are left out. All arrays may be
 * backed by a `SharedArrayBuffer`.
 */
export interface TrainingLayout {
  /** Per trace, its distinct text. */
  textOf: Int32Array;
  /** Text `t`'s word ids: `words[wordStart[t] .. wordStart[t + 1])`. */
  wordStart: Int32Array;
  words: Int32Array;
  /** Text `t`'s bigram rows: `bigramRows[bigramStart[t] .. bigramStart[t + 1])`. */
  bigramStart: Int32Array;
  bigramRows: Int32Array;
  /** Word `w`'s entries: `entryRows` and `entryValues` over `[entryStart[w], entryStart[w + 1])`. */
  entryStart: Int32Array;
  entryRows: Int32Array;
  entryValues: Float32Array;
  /** Value of every bigram entry (a float32, as the other values). */
  bigramValue: number;
}

/** The training layout of a corpus for the table's rows (see `TrainingLayout`). */
export function trainingLayout(
  corpus: Corpus,
  rowOf: Int32Array,
  ngramAverageMin: number,
  scales: KindScales = DEFAULT_KIND_SCALES,
): TrainingLayout {
  const wordCount = corpus.bucketStart.length - 1;
  const entryStart = shared(Int32Array, wordCount + 1);
  let total = 0;
  for (let w = 0; w < wordCount; w++) {
    for (let y = corpus.bucketStart[w]!; y < corpus.bucketStart[w + 1]!; y++) {
      if (rowOf[corpus.buckets[y]!]! >= 0) total++;
    }
    entryStart[w + 1] = total;
  }
  const entryRows = shared(Int32Array, total);
  const entryValues = shared(Float32Array, total);
  let n = 0;
  for (let w = 0; w < wordCount; w++) {
    const from = corpus.bucketStart[w]!;
    const to = corpus.bucketStart[w + 1]!;
    const share = scales.ngram / Math.max(1, to - from - 1, ngramAverageMin);
    for (let y = from; y < to; y++) {
      const r = rowOf[corpus.buckets[y]!]!;
      if (r < 0) continue;
      entryRows[n] = r;
      entryValues[n] = y === from ? scales.word : share;
      n++;
    }
  }
  const bigramRows = shared(Int32Array, corpus.bigrams.length);
  for (let x = 0; x < bigramRows.length; x++) {
    bigramRows[x] = rowOf[corpus.bigrams[x]!]!;
  }
  return {
    textOf: copyShared(corpus.textOf),
    wordStart: copyShared(corpus.wordStart),
    words: copyShared(corpus.words),
    bigramStart: copyShared(corpus.bigramStart),
    bigramRows,
    entryStart,
    entryRows,
    entryValues,
    bigramValue: Math.fround(scales.bigram),
  };
}

type TypedArray = Uint8Array | Int32Array | Float32Array | Float64Array;
type TypedArrayClass<T extends TypedArray> = {
  new (buffer: ArrayBufferLike, offset?: number, length?: number): T;
  new (length: number): T;
  readonly BYTES_PER_ELEMENT: number;
};

/** A typed array of `length` zeros in shared memory. */
export function shared<T extends TypedArray>(
  Class: TypedArrayClass<T>,
  length: number,
): T {
  return new Class(
    new SharedArrayBuffer(Math.max(1, length) * Class.BYTES_PER_ELEMENT),
    0,
    length,
  );
}

function copyShared(a: Int32Array): Int32Array {
  const out = shared(Int32Array, a.length);
  out.set(a);
  return out;
}

/** An append-only typed array that doubles as it grows. */
class Growable<T extends TypedArray> {
  #data: T;
  length = 0;
  constructor(private Class: TypedArrayClass<T>, capacity: number) {
    this.#data = new Class(capacity);
  }
  push(v: number): void {
    if (this.length === this.#data.length) {
      const bigger = new this.Class(this.#data.length * 2);
      bigger.set(this.#data as never);
      this.#data = bigger;
    }
    this.#data[this.length++] = v;
  }
  /** The contents, trimmed to length. */
  done(): T {
    return this.#data.slice(0, this.length) as T;
  }
}
