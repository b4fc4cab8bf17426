/**
 * A table's memory of the words it has met, bounded in bytes: each word's
 * buckets, how many of them no training text had, and per question the
 * word's vector (what the word adds to every option's score).
 *
 * Vectors live side by side in one `Float32Array` arena, so a cached word
 * costs one map lookup and a contiguous read; a vector is float32 exactly
 * as the weights are stored, so keeping it changes no score.
 *
 * @module
 */

/** What a table keeps about one word it has met. */
export interface WordEntry {
  /** The whole-word bucket first, then the distinct n-gram buckets. */
  readonly buckets: readonly number[];
  /** How many of `buckets` no training text had. */
  readonly unseen: number;
  /** True when the cache keeps the entry (then its vectors may be kept too). */
  readonly kept: boolean;
  /**
   * Per question slot, where the word's vector starts in the cache's arena,
   * or -1 (or absent) while it is not kept.
   */
  readonly vectorAt: number[];
}

/** Rough V8 sizes of an entry with its map slot and key, beside its buckets. */
const ENTRY_BYTES = 120;

/**
 * The words a table has met, behind one lookup. It holds at most
 * `budgetBytes`: the entries (estimated) and the vector arena together.
 * Past that, words are still answered, just no longer kept.
 */
export class WordCache {
  readonly #entries = new Map<string, WordEntry>();
  readonly #budget: number;
  #entryBytes = 0;
  /** Vectors, allocated on first use; `#used` floats of it are taken. */
  #arena: Float32Array = new Float32Array(0);
  #used = 0;

  /** A cache that keeps about `budgetBytes` (32 MiB by default). */
  constructor(budgetBytes = 32 * 1024 * 1024) {
    if (!(budgetBytes >= 0 && Number.isFinite(budgetBytes))) {
      throw new RangeError(
        `Word cache budget must be a non-negative number of bytes: got ${budgetBytes}`,
      );
    }
    this.#budget = budgetBytes;
  }

  /** Words kept. */
  get size(): number {
    return this.#entries.size;
  }

  /** Bytes held: the entries (estimated) plus the vector arena allocated. */
  get bytes(): number {
    return this.#entryBytes + this.#arena.byteLength;
  }

  /** The budget in bytes. */
  get budgetBytes(): number {
    return this.#budget;
  }

  /** The arena the offsets of `WordEntry.vectorAt` point into. */
  get arena(): Float32Array {
    return this.#arena;
  }

  /** The entry of `word`, or undefined when it is not kept. */
  get(word: string): WordEntry | undefined {
    return this.#entries.get(word);
  }

  /**
   * Makes the entry of `word` from its `buckets` and its `unseen` count,
   * keeping it while the budget allows.
   */
  add(word: string, buckets: readonly number[], unseen: number): WordEntry {
    const bytes = ENTRY_BYTES + 2 * word.length + 8 * buckets.length;
    const kept = this.bytes + bytes <= this.#budget;
    const entry: WordEntry = { buckets, unseen, kept, vectorAt: [] };
    if (kept) {
      this.#entryBytes += bytes;
      this.#entries.set(word, entry);
    }
    return entry;
  }

  /**
   * Room for a vector of `k` floats: its offset in the arena, or -1 when
   * the budget is spent.
   */
  reserveVector(k: number): number {
    if (this.#used + k > this.#arena.length) {
      // Grow by doubling, never past what the budget can hold.
      const cap = Math.floor((this.#budget - this.#entryBytes) / 4);
      const want = Math.max(4096, 2 * this.#arena.length, this.#used + k);
      const size = Math.min(cap, want);
      if (size < this.#used + k) return -1;
      const grown = new Float32Array(size);
      grown.set(this.#arena.subarray(0, this.#used));
      this.#arena = grown;
    }
    const at = this.#used;
    this.#used += k;
    return at;
  }
}
