/**
 * A serving state's memory of the words its table has met, bounded in
 * bytes: each word's buckets, how many of them no training text had, and
 * per question the word's vector (what the word adds to every option's
 * score).
 *
 * Everything lives in typed arrays: the words' characters, their buckets,
 * an open-addressing hash index, and the vectors side by side in one
 * float32 arena (float32 exactly as the weights are stored, so keeping a
 * vector changes no score). No object is kept per word, so a full cache
 * adds nothing for the garbage collector to trace, and the bytes it holds
 * are exactly the typed arrays' lengths. Past its budget, words are still
 * answered, just no longer kept.
 *
 * @module
 */

/** The budget of a cache made without one: 16 MiB. */
export const DEFAULT_WORD_CACHE_BYTES = 16 * 1024 * 1024;

/**
 * The hash the cache indexes a word by: FNV-1a over its UTF-16 code units,
 * then mixed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hashWord } from "./word_cache.ts";
 * assert.equal(hashWord("parcel"), hashWord("parcel"));
 * ```
 */
export function hashWord(word: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) {
    h = Math.imul(h ^ word.charCodeAt(i), 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  return h | 0;
}

/**
 * The words a serving state has met, by id (0, 1, ...), in typed arrays.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hashWord, WordCache } from "./word_cache.ts";
 * const cache = new WordCache(1 << 20);
 * const id = cache.add("parcel", hashWord("parcel"), [12, 345, 678], 1);
 * assert.equal(cache.find("parcel", hashWord("parcel")), id);
 * ```
 */
export class WordCache {
  readonly #budget: number;
  #count = 0;
  // Every array starts empty and doubles as words come, within the budget.
  /** Open addressing: id + 1 of the word in each slot, 0 when free. */
  #index = new Int32Array(0);
  #hash = new Int32Array(0);
  #unseen = new Int32Array(0);
  /** Word `id`'s characters are `#chars[#charAt[id], #charAt[id + 1])`. */
  #charAt = new Int32Array(0);
  #chars = new Uint16Array(0);
  /** Word `id`'s buckets are `#buckets[#bucketAt[id], #bucketAt[id + 1])`. */
  #bucketAt = new Int32Array(0);
  #buckets = new Int32Array(0);
  /** Per word and question slot, where its vector starts in the arena, or -1. */
  #vectorAt = new Int32Array(0);
  #slots = 1;
  /** Vectors; `#used` floats of it are taken. */
  #arena = new Float32Array(0);
  #used = 0;

  /** A cache that holds at most `budgetBytes` (16 MiB by default). */
  constructor(budgetBytes: number = DEFAULT_WORD_CACHE_BYTES) {
    if (!(budgetBytes >= 0 && Number.isFinite(budgetBytes))) {
      throw new RangeError(
        `Word cache budget must be a non-negative number of bytes: got ${budgetBytes}`,
      );
    }
    this.#budget = budgetBytes;
  }

  /** Words kept. */
  get size(): number {
    return this.#count;
  }

  /** Bytes held: every typed array the cache has allocated. */
  get bytes(): number {
    return this.#index.byteLength + this.#hash.byteLength +
      this.#unseen.byteLength + this.#charAt.byteLength +
      this.#chars.byteLength + this.#bucketAt.byteLength +
      this.#buckets.byteLength + this.#vectorAt.byteLength +
      this.#arena.byteLength;
  }

  /** The budget in bytes. */
  get budgetBytes(): number {
    return this.#budget;
  }

  /** The arena vector offsets point into (it may move when it grows). */
  get arena(): Float32Array {
    return this.#arena;
  }

  /** The array word buckets live in (see `bucketsStart`). */
  get bucketStore(): Int32Array {
    return this.#buckets;
  }

  /** The id of `word` (whose `hashWord` is `hash`), or -1 when it is not kept. */
  find(word: string, hash: number): number {
    if (this.#count === 0) return -1;
    const index = this.#index;
    const mask = index.length - 1;
    for (let i = hash & mask;; i = (i + 1) & mask) {
      const slot = index[i]!;
      if (slot === 0) return -1;
      const id = slot - 1;
      if (this.#hash[id] === hash && this.#sameWord(id, word)) return id;
    }
  }

  #sameWord(id: number, word: string): boolean {
    const from = this.#charAt[id]!;
    if (this.#charAt[id + 1]! - from !== word.length) return false;
    const chars = this.#chars;
    for (let i = 0; i < word.length; i++) {
      if (chars[from + i] !== word.charCodeAt(i)) return false;
    }
    return true;
  }

  /**
   * Keeps `word` (not kept yet) with its `buckets` and `unseen` count;
   * returns its id, or -1 when the budget has no room for it.
   */
  add(
    word: string,
    hash: number,
    buckets: ArrayLike<number>,
    unseen: number,
  ): number {
    const id = this.#count;
    if (!this.#roomForWord(word.length, buckets.length)) return -1;
    this.#hash[id] = hash;
    this.#unseen[id] = unseen;
    const c = this.#charAt[id]!;
    for (let i = 0; i < word.length; i++) {
      this.#chars[c + i] = word.charCodeAt(i);
    }
    this.#charAt[id + 1] = c + word.length;
    const b = this.#bucketAt[id]!;
    for (let i = 0; i < buckets.length; i++) this.#buckets[b + i] = buckets[i]!;
    this.#bucketAt[id + 1] = b + buckets.length;
    const index = this.#index;
    const mask = index.length - 1;
    let i = hash & mask;
    while (index[i] !== 0) i = (i + 1) & mask;
    index[i] = id + 1;
    this.#count++;
    return id;
  }

  /** How many of word `id`'s buckets no training text had. */
  unseen(id: number): number {
    return this.#unseen[id]!;
  }

  /** Where word `id`'s buckets start in `bucketStore`. */
  bucketsStart(id: number): number {
    return this.#bucketAt[id]!;
  }

  /** Where word `id`'s buckets end in `bucketStore`. */
  bucketsEnd(id: number): number {
    return this.#bucketAt[id + 1]!;
  }

  /** Word `id`'s buckets, as a new plain array. */
  buckets(id: number): number[] {
    return Array.from(
      this.#buckets.subarray(this.#bucketAt[id]!, this.#bucketAt[id + 1]!),
    );
  }

  /** Where word `id`'s vector for question `slot` starts in the arena, or -1. */
  vectorAt(id: number, slot: number): number {
    return slot < this.#slots ? this.#vectorAt[id * this.#slots + slot]! : -1;
  }

  /**
   * Room for word `id`'s vector of `k` floats for question `slot`: its
   * offset in the arena (recorded for `vectorAt`), or -1 when the budget is
   * spent.
   */
  reserveVector(id: number, slot: number, k: number): number {
    if (slot >= this.#slots && !this.#growSlots(slot + 1)) return -1;
    if (this.#used + k > this.#arena.length) {
      const want = Math.max(4096, 2 * this.#arena.length, this.#used + k);
      const spare = this.#budget - (this.bytes - this.#arena.byteLength);
      const size = Math.min(want, Math.floor(spare / 4));
      if (size < this.#used + k) return -1;
      const grown = new Float32Array(size);
      grown.set(this.#arena.subarray(0, this.#used));
      this.#arena = grown;
    }
    const at = this.#used;
    this.#used += k;
    this.#vectorAt[id * this.#slots + slot] = at;
    return at;
  }

  /** Makes room for one more word of `chars` characters and `buckets` buckets, within the budget. */
  #roomForWord(chars: number, buckets: number): boolean {
    const id = this.#count;
    const grows: [number, number][] = []; // [which, new length]
    const perWord = id + 1 > this.#hash.length
      ? Math.max(16, 2 * this.#hash.length)
      : 0;
    const charEnd = (this.#charAt[id] ?? 0) + chars;
    const charLength = charEnd > this.#chars.length
      ? Math.max(128, 2 * this.#chars.length, charEnd)
      : 0;
    const bucketEnd = (this.#bucketAt[id] ?? 0) + buckets;
    const bucketLength = bucketEnd > this.#buckets.length
      ? Math.max(512, 2 * this.#buckets.length, bucketEnd)
      : 0;
    let extra = 0;
    if (perWord > 0) {
      // index (two slots per word), hash, unseen, charAt, bucketAt, vectorAt
      const now = this.#index.byteLength + this.#hash.byteLength +
        this.#unseen.byteLength + this.#charAt.byteLength +
        this.#bucketAt.byteLength + this.#vectorAt.byteLength;
      extra += 4 * (6 * perWord + 2 + perWord * this.#slots) - now;
      grows.push([0, perWord]);
    }
    if (charLength > 0) {
      extra += 2 * (charLength - this.#chars.length);
      grows.push([1, charLength]);
    }
    if (bucketLength > 0) {
      extra += 4 * (bucketLength - this.#buckets.length);
      grows.push([2, bucketLength]);
    }
    if (this.bytes + extra > this.#budget) return false;
    for (const [which, n] of grows) {
      if (which === 0) this.#growWords(n);
      else if (which === 1) this.#chars = grow(this.#chars, new Uint16Array(n));
      else this.#buckets = grow(this.#buckets, new Int32Array(n));
    }
    return true;
  }

  /** Room for `n` words: the per-word arrays grow, the index is rebuilt twice as wide. */
  #growWords(n: number): void {
    this.#hash = grow(this.#hash, new Int32Array(n));
    this.#unseen = grow(this.#unseen, new Int32Array(n));
    this.#charAt = grow(this.#charAt, new Int32Array(n + 1));
    this.#bucketAt = grow(this.#bucketAt, new Int32Array(n + 1));
    this.#vectorAt = grow(
      this.#vectorAt,
      new Int32Array(n * this.#slots).fill(-1),
    );
    const index = new Int32Array(2 * n);
    const mask = index.length - 1;
    for (let id = 0; id < this.#count; id++) {
      let i = this.#hash[id]! & mask;
      while (index[i] !== 0) i = (i + 1) & mask;
      index[i] = id + 1;
    }
    this.#index = index;
  }

  /** Room for `slots` question slots per word, within the budget. */
  #growSlots(slots: number): boolean {
    const words = this.#hash.length;
    if (this.bytes + 4 * words * (slots - this.#slots) > this.#budget) {
      return false;
    }
    const next = new Int32Array(words * slots).fill(-1);
    for (let id = 0; id < words; id++) {
      for (let s = 0; s < this.#slots; s++) {
        next[id * slots + s] = this.#vectorAt[id * this.#slots + s]!;
      }
    }
    this.#vectorAt = next;
    this.#slots = slots;
    return true;
  }
}

/** `into` with the whole of `from` copied to its start. */
function grow<T extends Int32Array | Uint16Array>(from: T, into: T): T {
  into.set(from);
  return into;
}
