/**
 * Texts prepared for a table: featurised once (exactly as `featurize` does)
 * and looked up in the word cache of the caller's `TableState`, to answer
 * any number of questions.
 *
 * @module
 */

import {
  bigramBucket,
  capWord,
  type FeaturizerSettings,
  type TextFeatures,
  wordBucketsOf,
} from "./features.ts";
import {
  noveltyShare,
  type Table,
  unseenBuckets,
  type WordRef,
} from "./table.ts";
import { wordsOf } from "./text.ts";
import type { TableState } from "./state.ts";
import { hashWord, type WordCache } from "./word_cache.ts";

/**
 * A text featurised once for a table, to answer any number of questions:
 * its distinct words as references into a state's word cache, the
 * buckets of the words the cache does not keep, its bigrams and novelty.
 */
export interface PreparedText {
  /** Distinct words, capped, in order of first appearance. */
  readonly words: readonly string[];
  /** Per word, its id in the state's word cache, or -1 when not kept. */
  readonly entries: readonly WordRef[];
  /** Per word the cache does not keep, its buckets (null for kept words). */
  readonly looseBuckets: readonly (readonly number[] | null)[];
  /** Distinct bigram buckets. */
  readonly bigramBuckets: readonly number[];
  /** True when the text has no word at all. */
  readonly empty: boolean;
  /** Share of the text's buckets no training text had. */
  readonly novelty: number;
  /** The text's features, as `featurize` gives them (made on first use: answering does not need them). */
  readonly features: TextFeatures;
}

class Prepared implements PreparedText {
  #features: TextFeatures | null;
  readonly #cache: WordCache;

  constructor(
    cache: WordCache,
    readonly words: readonly string[],
    readonly entries: readonly WordRef[],
    readonly looseBuckets: readonly (readonly number[] | null)[],
    readonly bigramBuckets: readonly number[],
    readonly novelty: number,
    features: TextFeatures | null,
  ) {
    this.#cache = cache;
    this.#features = features;
  }

  get empty(): boolean {
    return this.words.length === 0;
  }

  get features(): TextFeatures {
    if (this.#features === null) {
      this.#features = {
        words: [...this.words],
        wordBuckets: this.entries.map((id, i) =>
          id >= 0 ? this.#cache.buckets(id) : this.looseBuckets[i]!
        ),
        bigramBuckets: this.bigramBuckets,
        empty: this.empty,
      };
    }
    return this.#features;
  }
}

/**
 * Featurises a text for `table` (as `featurize` does: the same words,
 * buckets and bigrams), looking each distinct word up once in the word
 * cache of `state` (the table's) and keeping new ones while it has room.
 *
 * @example
 * ```ts
 * import { assess, prepareText, QUIET_GUARD, type Table, TableState } from "./mod.ts";
 * declare const table: Table;
 * const state = new TableState(table);
 * const text = prepareText(table, state, "my card has not arrived");
 * for (const q of table.questions) {
 *   console.log(q.name, assess(table, state, text, q.name, {}, QUIET_GUARD).answer);
 * }
 * ```
 */
export function prepareText(
  table: Table,
  state: TableState,
  text: string,
): PreparedText {
  state.check(table);
  const settings = table.featurizer;
  const cache = state.words;
  const capped = wordsOf(text);
  const words: string[] = [];
  const entries: WordRef[] = [];
  const loose: (readonly number[] | null)[] = [];
  let total = 0;
  let unseen = 0;
  // Short texts check repeats by a scan, cheaper than building a set.
  const seen = capped.length > 32 ? new Set<string>() : null;
  for (let i = 0; i < capped.length; i++) {
    const w = capWord(capped[i]!, settings.max_word_length);
    capped[i] = w;
    if (seen === null ? words.includes(w) : seen.has(w)) continue;
    seen?.add(w);
    words.push(w);
    const hash = hashWord(w);
    let id = cache.find(w, hash);
    if (id < 0) {
      const buckets = wordBucketsOf(w, settings);
      const u = unseenBuckets(table, buckets);
      id = cache.add(w, hash, buckets, u);
      if (id < 0) {
        entries.push(-1);
        loose.push(buckets);
        total += buckets.length;
        unseen += u;
        continue;
      }
    }
    entries.push(id);
    loose.push(null);
    total += cache.bucketsEnd(id) - cache.bucketsStart(id);
    unseen += cache.unseen(id);
  }
  const bigrams = bigramsOf(capped, settings);
  return new Prepared(
    cache,
    words,
    entries,
    loose,
    bigrams,
    noveltyShare(table, { bigramBuckets: bigrams }, total, unseen),
    null,
  );
}

/** The distinct bigram buckets of a text's capped words, as `featurize` finds them. */
function bigramsOf(
  capped: readonly string[],
  settings: FeaturizerSettings,
): number[] {
  const bigrams: number[] = [];
  if (!settings.bigrams) return bigrams;
  const seen = capped.length > 32 ? new Set<number>() : null;
  for (let i = 1; i < capped.length; i++) {
    const b = bigramBucket(capped[i - 1]!, capped[i]!, settings);
    if (seen === null ? bigrams.includes(b) : seen.has(b)) continue;
    seen?.add(b);
    bigrams.push(b);
  }
  return bigrams;
}

/**
 * Prepares a text featurised earlier (as training does) for `table`, in
 * the word cache of `state`.
 *
 * @example
 * ```ts
 * import { featurize } from "./features.ts";
 * import { prepareFeatures, type Table, TableState } from "./mod.ts";
 * declare const table: Table;
 * const state = new TableState(table);
 * const prepared = prepareFeatures(table, state, featurize("my card", table.featurizer));
 * ```
 */
export function prepareFeatures(
  table: Table,
  state: TableState,
  features: TextFeatures,
): PreparedText {
  state.check(table);
  const cache = state.words;
  const entries: WordRef[] = [];
  const loose: (readonly number[] | null)[] = [];
  let total = 0;
  let unseen = 0;
  features.words.forEach((w, i) => {
    const buckets = features.wordBuckets[i]!;
    const hash = hashWord(w);
    let id = cache.find(w, hash);
    const u = id >= 0 ? cache.unseen(id) : unseenBuckets(table, buckets);
    if (id < 0) id = cache.add(w, hash, buckets, u);
    entries.push(id);
    loose.push(id < 0 ? buckets : null);
    total += buckets.length;
    unseen += u;
  });
  return new Prepared(
    cache,
    features.words,
    entries,
    loose,
    features.bigramBuckets,
    noveltyShare(table, features, total, unseen),
    features,
  );
}
