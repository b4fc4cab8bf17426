/**
 * The state a loaded table keeps while it answers: its word cache, per
 * question the scratch buffers of one answer, the row minima the radius
 * reads, and what serving decided about the question (the threshold in
 * force, a withdrawn certification). Each table owns one; nothing here is
 * shared between tables.
 *
 * @module
 */

import type { QuestionTable, Table } from "./table.ts";
import { WordCache } from "./word_cache.ts";

/** What one question of a table keeps between answers. */
export interface QuestionState {
  /** Where the question's vector sits in each word entry (one per question met by this state). */
  readonly vectorSlot: number;
  /** Per weight row, its smallest weight over the options. */
  readonly rowMinima: Float32Array;
  /** Scratch for one answer's logits; nothing keeps it past a call. */
  readonly logits: Float64Array;
  /** Scratch for one answer's full-option probabilities. */
  readonly probabilities: Float64Array;
  /** Scratch for one answer's probabilities over the offered options. */
  readonly narrowed: Float64Array;
  /** Scratch for the vector of a word the cache has no room for. */
  readonly wordVector: Float32Array;
  /** Scratch for where a text's word vectors are (grown for long texts). */
  offsets: Int32Array;
  /**
   * The threshold certification is judged against: the calibrated one
   * until serving moves it; null when the question has none.
   */
  threshold: number | null;
  /** True while serving withdraws certification (flag `drift`, rule `live_audit`). */
  withdrawn: boolean;
}

/** Options of `TableState`. */
export interface TableStateOptions {
  /** Most bytes the word cache holds (`DEFAULT_WORD_CACHE_BYTES`, 16 MiB, by default). */
  wordCacheBytes?: number;
}

/**
 * The serving state of one table. Per-question state is made on first use
 * (the trainer adds questions one by one), or all at once by `prepare`.
 *
 * @example
 * ```ts
 * import { type Table, TableState } from "./mod.ts";
 * declare const loaded: Table;
 * // The same weights with a word cache of 4 MiB of its own.
 * const table: Table = { ...loaded, state: new TableState({ wordCacheBytes: 4 << 20 }) };
 * table.state.prepare(table);
 * ```
 */
export class TableState {
  /** The words met so far. */
  readonly words: WordCache;
  readonly #questions = new Map<QuestionTable, QuestionState>();

  /** An empty state. */
  constructor(options: TableStateOptions = {}) {
    this.words = new WordCache(options.wordCacheBytes);
  }

  /**
   * The state of question `q` of `table`, made on first use (its threshold
   * in force then starts from `q.calibration`).
   */
  question(q: QuestionTable): QuestionState {
    const found = this.#questions.get(q);
    if (found !== undefined) return found;
    const k = q.options.length;
    const made: QuestionState = {
      vectorSlot: this.#questions.size,
      rowMinima: rowMinimaOf(q),
      logits: new Float64Array(k),
      probabilities: new Float64Array(k),
      narrowed: new Float64Array(k),
      wordVector: new Float32Array(k),
      offsets: new Int32Array(64),
      threshold: q.calibration.threshold,
      withdrawn: false,
    };
    this.#questions.set(q, made);
    return made;
  }

  /** Makes the state of every question of `table` now (at load time, not on a request). */
  prepare(table: Table): void {
    for (const q of table.questions) this.question(q);
  }
}

/** Per row of a question's weights, its smallest weight over the options. */
function rowMinimaOf(q: QuestionTable): Float32Array {
  const k = q.options.length;
  const rows = k === 0 ? 0 : q.weights.length / k;
  const minima = new Float32Array(rows);
  for (let r = 0; r < rows; r++) {
    let low = Infinity;
    for (let j = r * k; j < (r + 1) * k; j++) {
      const w = q.weights[j]!;
      if (w < low) low = w;
    }
    minima[r] = low;
  }
  return minima;
}

function questionOf(table: Table, name: string): QuestionTable {
  const q = table.byName.get(name);
  if (q === undefined) {
    throw new RangeError(
      `The table has no question named ${
        JSON.stringify(name)
      }; its questions are: ${table.questions.map((x) => x.name).join(", ")}`,
    );
  }
  return q;
}

/**
 * The threshold in force for question `name`: the calibrated one unless
 * `setThresholdInForce` moved it; null when the question has none.
 * Throws `RangeError` for a name the table does not know.
 *
 * @example
 * ```ts
 * import { type Table, thresholdInForce } from "./mod.ts";
 * declare const table: Table;
 * thresholdInForce(table, "intent"); // 0.73, as calibrated
 * ```
 */
export function thresholdInForce(table: Table, name: string): number | null {
  return table.state.question(questionOf(table, name)).threshold;
}

/**
 * Moves the threshold question `name` is certified against (for example
 * from live audit evidence); from the next answer on, a confidence at or
 * above `threshold` passes the confidence rule. Null makes the question
 * uncalibrated. Throws `RangeError` for an unknown name or a threshold
 * outside [0, 1].
 *
 * @example
 * ```ts
 * import { setThresholdInForce, type Table } from "./mod.ts";
 * declare const table: Table;
 * setThresholdInForce(table, "intent", 0.8); // stricter from the next answer on
 * ```
 */
export function setThresholdInForce(
  table: Table,
  name: string,
  threshold: number | null,
): void {
  const q = questionOf(table, name);
  if (threshold !== null && !(threshold >= 0 && threshold <= 1)) {
    throw new RangeError(
      `A threshold must be a number in [0, 1] or null: got ${threshold} for ${
        JSON.stringify(name)
      }`,
    );
  }
  table.state.question(q).threshold = threshold;
}

/**
 * Withdraws certification of question `name` (for example when a live
 * audit finds the bound broken): its answers get flag `drift` with drift
 * rule `live_audit` until `reinstateCertification`. Throws `RangeError` for
 * an unknown name.
 *
 * @example
 * ```ts
 * import { reinstateCertification, type Table, withdrawCertification } from "./mod.ts";
 * declare const table: Table;
 * withdrawCertification(table, "intent"); // answers: flag drift, driftRule live_audit
 * reinstateCertification(table, "intent");
 * ```
 */
export function withdrawCertification(table: Table, name: string): void {
  table.state.question(questionOf(table, name)).withdrawn = true;
}

/**
 * Ends a withdrawal made by `withdrawCertification`. Throws `RangeError`
 * for an unknown name.
 *
 * @example
 * ```ts
 * import { reinstateCertification, type Table } from "./mod.ts";
 * declare const table: Table;
 * reinstateCertification(table, "intent");
 * ```
 */
export function reinstateCertification(table: Table, name: string): void {
  table.state.question(questionOf(table, name)).withdrawn = false;
}
