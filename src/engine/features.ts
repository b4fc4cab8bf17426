/**
 * Hashed sparse text features.
 *
 * A text becomes a set of distinct words and a set of distinct word bigrams.
 * Each word is represented by the hashed bucket of its whole form plus the
 * buckets of the character n-grams of `<word>`; the table adds the word's
 * row to the average of its n-gram rows, so one word moves a score by at
 * most its word row plus its strongest n-gram row. That bound is what makes
 * the radius of `radius.ts` both sound and useful.
 *
 * Buckets live in `[0, 2^bucketsLog2)`: whole words in the first quarter,
 * character n-grams in the second, bigrams in the upper half.
 *
 * @module
 */

import { wordsOf } from "./text.ts";

/** How texts are turned into buckets; stored in the bundle. */
export interface FeaturizerSettings {
  /** log2 of the number of hash buckets. */
  buckets_log2: number;
  /** Shortest character n-gram. */
  char_ngram_min: number;
  /** Longest character n-gram; 0 turns character n-grams off. */
  char_ngram_max: number;
  /** Words are cut to this many UTF-16 code units before hashing. */
  max_word_length: number;
  /** Whether word bigrams are features. */
  bigrams: boolean;
  /**
   * A word's n-gram rows are summed and divided by the larger of their count
   * and this number (1: a plain average). The weights stay at most 1 in
   * total, so a word's n-grams never add more than their largest row.
   */
  ngram_average_min: number;
}

/** The settings a new table is trained with unless told otherwise. */
export const DEFAULT_FEATURIZER: FeaturizerSettings = {
  buckets_log2: 20,
  char_ngram_min: 3,
  char_ngram_max: 5,
  max_word_length: 20,
  bigrams: true,
  ngram_average_min: 15,
};

/** The features of one text. */
export interface TextFeatures {
  /** Distinct words, capped, in order of first appearance. */
  words: string[];
  /**
   * For each entry of `words`, its buckets: the whole word first, then its
   * distinct character n-grams.
   */
  wordBuckets: (readonly number[])[];
  /** Distinct bigram buckets. */
  bigramBuckets: readonly number[];
  /** True when the text has no word at all. */
  empty: boolean;
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return h >>> 0;
}

/** FNV-1a over the code units of `s[from, to)`, starting from `seed`. */
function fnv(s: string, from: number, to: number, seed: number): number {
  let h = seed;
  for (let i = from; i < to; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, FNV_PRIME);
  }
  return h >>> 0;
}

const WORD_SEED = FNV_OFFSET;
const NGRAM_SEED = mix(FNV_OFFSET ^ 0x9e3779b9);

/** Cuts a word to `max` code units without splitting a surrogate pair. */
export function capWord(word: string, max: number): string {
  if (word.length <= max) return word;
  let end = max;
  const last = word.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return word.slice(0, end);
}

/** Which part of the bucket space a bucket belongs to. */
export type BucketKind = "word" | "ngram" | "bigram";

/** The kind of a bucket, from where it lies in the space. */
export function bucketKind(
  bucket: number,
  settings: FeaturizerSettings,
): BucketKind {
  const quarter = (1 << settings.buckets_log2) >>> 2;
  return bucket < quarter ? "word" : bucket < 2 * quarter ? "ngram" : "bigram";
}

/**
 * The buckets of one (already capped) word: its whole form first, then its
 * distinct character n-grams, boundaries marked with `<` and `>`.
 */
export function wordBucketsOf(
  word: string,
  settings: FeaturizerSettings,
): readonly number[] {
  const quarter = (1 << settings.buckets_log2) >>> 2;
  const mask = quarter - 1;
  const found: number[] = [mix(fnv(word, 0, word.length, WORD_SEED)) & mask];
  const { char_ngram_min: lo, char_ngram_max: hi } = settings;
  if (hi > 0) {
    const marked = `<${word}>`;
    const n = marked.length;
    for (let start = 0; start < n; start++) {
      let h = NGRAM_SEED;
      for (let end = start; end < n && end - start < hi; end++) {
        h = Math.imul(h ^ marked.charCodeAt(end), FNV_PRIME);
        const len = end - start + 1;
        if (len >= lo) {
          const b = quarter + (mix(h >>> 0) & mask);
          if (found.indexOf(b, 1) < 0) found.push(b);
        }
      }
    }
  }
  // A plain array: small, inside the JavaScript heap, freed with its word.
  return found;
}

/** The bucket of the bigram `a b`, in the upper half of the space. */
export function bigramBucket(
  a: string,
  b: string,
  settings: FeaturizerSettings,
): number {
  const half = (1 << settings.buckets_log2) >>> 1;
  const h = fnv(
    b,
    0,
    b.length,
    Math.imul(fnv(a, 0, a.length, WORD_SEED) ^ 32, FNV_PRIME) >>> 0,
  );
  return half + (mix(h) & (half - 1));
}

/** A text's distinct words and bigrams, as every table reads it. */
export interface TextWords {
  /** Distinct words, capped, in order of first appearance. */
  words: string[];
  /** Distinct bigram buckets of neighbouring words, in order of first appearance. */
  bigramBuckets: number[];
}

/**
 * Reads a text as every table does: NFKC and lower case, UAX #29 words, each
 * capped at `max_word_length`; its distinct words and the distinct buckets of
 * its bigrams (neighbouring words, repeats included). A word's buckets are
 * `wordBucketsOf(word, settings)`. Training (`buildCorpus`) and serving
 * (`prepareText`) both featurise through this function, so they find the
 * same buckets.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DEFAULT_FEATURIZER, textWords } from "./features.ts";
 * const t = textWords("Refund, refund please", DEFAULT_FEATURIZER);
 * assert.deepEqual(t.words, ["refund", "please"]);
 * assert.equal(t.bigramBuckets.length, 2); // "refund refund", "refund please"
 * ```
 */
export function textWords(
  text: string,
  settings: FeaturizerSettings,
): TextWords {
  // Capped in place: `wordsOf` returns a fresh array.
  const capped = wordsOf(text);
  const words: string[] = [];
  // Short texts check repeats by a scan, cheaper than building a set.
  const seen = capped.length > 32 ? new Set<string>() : null;
  for (let i = 0; i < capped.length; i++) {
    const w = capWord(capped[i]!, settings.max_word_length);
    capped[i] = w;
    if (seen === null ? words.includes(w) : seen.has(w)) continue;
    seen?.add(w);
    words.push(w);
  }
  const bigrams: number[] = [];
  if (settings.bigrams) {
    // As for words: a scan for short texts, a set for long ones (a scan
    // would take quadratic time on a long text).
    const seenBigrams = capped.length > 32 ? new Set<number>() : null;
    for (let i = 1; i < capped.length; i++) {
      const b = bigramBucket(capped[i - 1]!, capped[i]!, settings);
      if (seenBigrams === null ? bigrams.includes(b) : seenBigrams.has(b)) {
        continue;
      }
      seenBigrams?.add(b);
      bigrams.push(b);
    }
  }
  return { words, bigramBuckets: bigrams };
}
