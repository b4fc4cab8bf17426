/**
 * Finding near-duplicate texts: TF-IDF word vectors and an all-pairs cosine
 * search with prefix filtering (Bayardo, Ma and Srikant, "Scaling up all
 * pairs similarity search", WWW 2007).
 *
 * Each text is a unit-length vector of its distinct words, each weighted by
 * its inverse document frequency `1 + ln((1 + N) / (1 + df))` (scikit-learn's
 * smoothed IDF). Two texts are similar when the cosine of their vectors
 * reaches a threshold `t`. The search never compares all pairs: each text
 * indexes only its rarest words, leaving out its most common words as long as
 * their part of the vector has norm below `t`. Then any pair with cosine
 * `>= t` shares an indexed word (the unindexed part alone adds less than `t`
 * to the dot product), so probing the index with every word of a text finds
 * all its similar predecessors. Common words fill few index lists, so the
 * work stays close to linear in the number of texts.
 *
 * One approximation bounds the worst case: an index list longer than the
 * scan limit (a word shared by many texts' rare parts, as in a log of one
 * template repeated with small changes) is scanned only over its most recent
 * entries. The limit shrinks as the number of texts grows
 * (`scanLimitFor`), so the work stays about linear: 2,000 entries up to
 * 10,000 texts (exact in practice), 200 at 100,000, 32 from 625,000 on.
 * Callers use the pairs to link texts, so a text similar to many earlier
 * ones is still linked to their group through the recent ones.
 *
 * @module
 */

import { wordsOf } from "../engine/mod.ts";

/** Texts as sparse unit vectors over a word vocabulary. */
export interface TextVectors {
  /** Text `i` has terms `terms[offsets[i] .. offsets[i + 1])`, ascending. */
  offsets: Int32Array;
  /**
   * Term ids, numbered by rarity: a smaller id is a word fewer texts have,
   * so each text's ascending terms run from its rarest word to its commonest.
   */
  terms: Int32Array;
  /** The matching weights; each text's weights have unit norm. */
  weights: Float32Array;
}

/** Most entries of one index list scanned per probe, for small sets (see the module doc). */
export const LIST_SCAN_LIMIT = 2000;
/** Fewest entries of one index list scanned per probe, however many texts. */
export const LIST_SCAN_FLOOR = 32;
/** Texts x scan limit: the limit is this over the number of texts, within the two above. */
const LIST_SCAN_WORK = 20_000_000;

/** The scan limit for an index over `n` texts (see the module doc). */
export function scanLimitFor(n: number): number {
  return Math.max(
    LIST_SCAN_FLOOR,
    Math.min(LIST_SCAN_LIMIT, Math.floor(LIST_SCAN_WORK / Math.max(1, n))),
  );
}

/**
 * TF-IDF vectors of `texts` (distinct words, presence times smoothed IDF,
 * unit length). A text without words gets an empty vector, similar to
 * nothing.
 */
export function textVectors(texts: readonly string[]): TextVectors {
  const vocabulary = new Map<string, number>();
  const df: number[] = [];
  const offsets = new Int32Array(texts.length + 1);
  const raw: number[] = [];
  for (let i = 0; i < texts.length; i++) {
    const start = raw.length;
    for (const word of wordsOf(texts[i]!)) {
      let id = vocabulary.get(word);
      if (id === undefined) {
        id = df.length;
        vocabulary.set(word, id);
        df.push(0);
      }
      // Distinct words only: a short scan is cheaper than a set.
      if (raw.indexOf(id, start) < 0) {
        raw.push(id);
        df[id]!++;
      }
    }
    offsets[i + 1] = raw.length;
  }
  // Renumber words by rarity (fewest texts first, ties by first appearance).
  const byRarity = Array.from(df, (_, id) => id).sort((a, b) =>
    df[a]! - df[b]! || a - b
  );
  const rank = new Int32Array(df.length);
  byRarity.forEach((id, r) => rank[id] = r);
  const n = texts.length;
  const idf = Float64Array.from(
    byRarity,
    (id) => 1 + Math.log((1 + n) / (1 + df[id]!)),
  );
  const terms = Int32Array.from(raw, (id) => rank[id]!);
  const weights = new Float32Array(terms.length);
  for (let i = 0; i < n; i++) {
    const from = offsets[i]!;
    const to = offsets[i + 1]!;
    terms.subarray(from, to).sort();
    let norm = 0;
    for (let j = from; j < to; j++) norm += idf[terms[j]!]! ** 2;
    const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    for (let j = from; j < to; j++) weights[j] = idf[terms[j]!]! * scale;
  }
  return { offsets, terms, weights };
}

/** Cosine of texts `a` and `b` (their dot product: the vectors have unit length). */
export function cosine(v: TextVectors, a: number, b: number): number {
  const { offsets, terms, weights } = v;
  let i = offsets[a]!;
  const iEnd = offsets[a + 1]!;
  let j = offsets[b]!;
  const jEnd = offsets[b + 1]!;
  let dot = 0;
  while (i < iEnd && j < jEnd) {
    const ti = terms[i]!;
    const tj = terms[j]!;
    if (ti === tj) dot += weights[i++]! * weights[j++]!;
    else if (ti < tj) i++;
    else j++;
  }
  return dot;
}

/**
 * An index of texts for cosine queries at a fixed threshold: texts are added
 * one by one, and a query finds the added texts at least that similar
 * (see the module doc for the prefix filter and the scan limit).
 */
export class SimilarityIndex {
  readonly #v: TextVectors;
  readonly #threshold: number;
  readonly #scanLimit: number;
  readonly #lists = new Map<number, number[]>();
  /** Per text, the last query that visited it (so each is checked once per query). */
  readonly #stamp: Int32Array;
  #query = 0;

  /** An empty index over the texts of `v`, for cosine `>= threshold` in (0, 1]. */
  constructor(v: TextVectors, threshold: number) {
    if (!(threshold > 0 && threshold <= 1)) {
      throw new RangeError(
        `Similarity threshold must be in (0, 1]: got ${threshold}`,
      );
    }
    this.#v = v;
    this.#threshold = threshold;
    this.#scanLimit = scanLimitFor(v.offsets.length - 1);
    this.#stamp = new Int32Array(v.offsets.length - 1).fill(-1);
  }

  /** Adds text `i`: its rare words go in the index, its common tail (norm below the threshold) does not. */
  add(i: number): void {
    const { offsets, terms, weights } = this.#v;
    const from = offsets[i]!;
    const t2 = this.#threshold * this.#threshold;
    let suffix = 0;
    let end = offsets[i + 1]!;
    while (end > from) {
      const w = weights[end - 1]!;
      if (suffix + w * w >= t2) break;
      suffix += w * w;
      end--;
    }
    for (let x = from; x < end; x++) {
      const term = terms[x]!;
      let list = this.#lists.get(term);
      if (list === undefined) this.#lists.set(term, list = []);
      list.push(i);
    }
  }

  /**
   * Calls `found(j, cosine)` for every added text `j` whose cosine with text
   * `i` reaches the threshold, until `found` returns true (enough found);
   * `consider(j)` may skip a candidate before its cosine is computed.
   */
  query(
    i: number,
    found: (j: number, cosine: number) => boolean | void,
    consider?: (j: number) => boolean,
  ): void {
    const { offsets, terms } = this.#v;
    const stamp = this.#stamp;
    const q = this.#query++;
    for (let x = offsets[i]!; x < offsets[i + 1]!; x++) {
      const list = this.#lists.get(terms[x]!);
      if (list === undefined) continue;
      const start = Math.max(0, list.length - this.#scanLimit);
      for (let y = list.length - 1; y >= start; y--) {
        const j = list[y]!;
        if (stamp[j] === q) continue;
        stamp[j] = q;
        if (consider !== undefined && !consider(j)) continue;
        const c = cosine(this.#v, j, i);
        if (c >= this.#threshold - 1e-6 && found(j, c) === true) return;
      }
    }
  }
}

/** Which texts take part in `similarPairs`, and in which role. */
export interface SearchOptions {
  /** Cosine threshold `t` in (0, 1]. */
  threshold: number;
  /** Texts that are indexed (may be found); all when absent. */
  indexed?: (i: number) => boolean;
  /** Texts that probe the index (look for earlier similar texts); all when absent. */
  probing?: (i: number) => boolean;
  /**
   * Called for a candidate pair before its cosine is computed; false skips
   * it (for example when the two are already linked).
   */
  consider?: (earlier: number, later: number) => boolean;
}

/**
 * Calls `found(earlier, later, cosine)` for pairs of texts (`earlier <
 * later`) whose cosine reaches `options.threshold`: every such pair where the
 * earlier text is indexed and the later one probes, except those `consider`
 * skips and those lost to the scan limit.
 */
export function similarPairs(
  v: TextVectors,
  options: SearchOptions,
  found: (earlier: number, later: number, cosine: number) => void,
): void {
  const index = new SimilarityIndex(v, options.threshold);
  const n = v.offsets.length - 1;
  const consider = options.consider;
  for (let i = 0; i < n; i++) {
    if (options.probing?.(i) ?? true) {
      index.query(
        i,
        (j, c) => found(j, i, c),
        consider === undefined ? undefined : (j) => consider(j, i),
      );
    }
    if (options.indexed?.(i) ?? true) index.add(i);
  }
}
