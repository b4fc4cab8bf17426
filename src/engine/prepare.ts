/**
 * Texts prepared for a table: featurised once (`textWords`, as training
 * featurises) and looked up in the word cache of the caller's `TableState`,
 * to answer any number of questions.
 *
 * @module
 */

import { type TextFeatures, textWords, wordBucketsOf } from "./features.ts";
import {
  noveltyShare,
  scoreWords,
  softmax,
  unseenBuckets,
  type WordRef,
} from "./score.ts";
import type { QuestionTable, Table } from "./table.ts";
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
  /** The text's words with their buckets, and its bigrams (made on first use: answering does not need them). */
  readonly features: TextFeatures;
}

class Prepared implements PreparedText {
  #features: TextFeatures | null = null;
  readonly #cache: WordCache;

  constructor(
    cache: WordCache,
    readonly words: readonly string[],
    readonly entries: readonly WordRef[],
    readonly looseBuckets: readonly (readonly number[] | null)[],
    readonly bigramBuckets: readonly number[],
    readonly novelty: number,
  ) {
    this.#cache = cache;
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
 * Featurises a text for `table` (`textWords`: the words, buckets and bigrams
 * training found), looking each distinct word up once in the word cache of
 * `state` (the table's) and keeping new ones while it has room.
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
  const { words, bigramBuckets } = textWords(text, settings);
  const entries: WordRef[] = [];
  const loose: (readonly number[] | null)[] = [];
  let total = 0;
  let unseen = 0;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
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
  return new Prepared(
    cache,
    words,
    entries,
    loose,
    bigramBuckets,
    noveltyShare(table, { bigramBuckets }, total, unseen),
  );
}

/**
 * Raw scores of every option of `q` for a prepared text, written into
 * `out` (returned): the table's logits, before the temperature.
 */
export function scorePrepared(
  table: Table,
  state: TableState,
  q: QuestionTable,
  text: PreparedText,
  out: Float64Array,
): Float64Array {
  return scoreWords(
    table,
    state,
    q,
    text.entries,
    text.looseBuckets,
    text.bigramBuckets,
    out,
  );
}

/**
 * The table's probabilities over all of question `q`'s options for a
 * prepared text (what `assess` computes before narrowing to offered
 * options), as a fresh array: the second tier's input beside the
 * embedding.
 */
export function fullProbabilities(
  table: Table,
  state: TableState,
  text: PreparedText,
  q: QuestionTable,
): Float64Array {
  const logits = scorePrepared(
    table,
    state,
    q,
    text,
    new Float64Array(q.options.length),
  );
  return softmax(logits, q.temperature);
}
