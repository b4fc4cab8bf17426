/**
 * The serving state of a table, owned by its caller: the word cache, per
 * question the scratch buffers of one answer, the row minima the radius
 * reads, and what serving decided about the question (the threshold in
 * force, a withdrawn certification). The table itself stays constant once
 * loaded; whoever answers from it makes a `TableState` for it and passes
 * it to every call, as a fastText model is `const` and its caller owns the
 * `State` it predicts with. One table may serve any number of states.
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
  /**
   * True once the reference model has answered options the table never
   * learned (a learning service's feedback): the traffic holds what the
   * table cannot answer, so nothing is certified (flag `options_changed`)
   * until a table that learned them is served.
   */
  optionsAdded: boolean;
}

/** Options of `TableState`. */
export interface TableStateOptions {
  /** Most bytes the word cache holds (`DEFAULT_WORD_CACHE_BYTES`, 16 MiB, by default). */
  wordCacheBytes?: number;
}

/**
 * The serving state of one table, for the table it was made for: a state
 * holds word buckets and vectors of that table's featurizer and rows, so
 * preparing a text with it for a table of other ones throws (a copy of the
 * table with other settings or questions is fine: vectors are kept per
 * question). Per-question state is made now for every question of the
 * table, and on first use for a question met later.
 *
 * @example
 * ```ts
 * import { assess, prepareText, QUIET_GUARD, type Table, TableState } from "./mod.ts";
 * declare const table: Table;
 * // The caller's state for `table`, with a word cache of 4 MiB.
 * const state = new TableState(table, { wordCacheBytes: 4 << 20 });
 * assess(table, state, prepareText(table, state, "my card"), "intent", {}, QUIET_GUARD);
 * ```
 */
export class TableState {
  /** The words met so far. */
  readonly words: WordCache;
  readonly #questions = new Map<QuestionTable, QuestionState>();
  readonly #featurizer: Table["featurizer"];
  readonly #rowOf: Table["rowOf"];

  /**
   * A state for `table`, with an empty word cache and the state of every
   * question made now (at load time, not on a request).
   */
  constructor(
    table: Pick<Table, "questions" | "featurizer" | "rowOf">,
    options: TableStateOptions = {},
  ) {
    this.words = new WordCache(options.wordCacheBytes);
    this.#featurizer = table.featurizer;
    this.#rowOf = table.rowOf;
    for (const q of table.questions) this.question(q);
  }

  /**
   * Throws `RangeError` unless this state was made for `table` (or a copy
   * of it with the same featurizer and rows).
   */
  check(table: Pick<Table, "featurizer" | "rowOf">): void {
    if (table.featurizer !== this.#featurizer || table.rowOf !== this.#rowOf) {
      throw new RangeError(
        "This TableState was made for another table (its featurizer or rows differ): make one for this table with new TableState(table)",
      );
    }
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
      optionsAdded: false,
    };
    this.#questions.set(q, made);
    return made;
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
 * The threshold in force for question `name` of `table` in `state`: the
 * calibrated one unless `setThresholdInForce` moved it; null when the
 * question has none.
 * Throws `RangeError` for a name the table does not know.
 *
 * @example
 * ```ts
 * import { type Table, type TableState, thresholdInForce } from "./mod.ts";
 * declare const table: Table;
 * declare const state: TableState;
 * thresholdInForce(table, state, "intent"); // 0.73, as calibrated
 * ```
 */
export function thresholdInForce(
  table: Table,
  state: TableState,
  name: string,
): number | null {
  return state.question(questionOf(table, name)).threshold;
}

/**
 * Moves the threshold question `name` is certified against in `state` (for example
 * from live audit evidence); from the next answer on, a confidence at or
 * above `threshold` passes the confidence rule. Null makes the question
 * uncalibrated. Throws `RangeError` for an unknown name or a threshold
 * outside [0, 1].
 *
 * @example
 * ```ts
 * import { setThresholdInForce, type Table, type TableState } from "./mod.ts";
 * declare const table: Table;
 * declare const state: TableState;
 * setThresholdInForce(table, state, "intent", 0.8); // stricter from the next answer on
 * ```
 */
export function setThresholdInForce(
  table: Table,
  state: TableState,
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
  state.question(q).threshold = threshold;
}

/**
 * Withdraws certification of question `name` in `state` (for example when a live
 * audit finds the bound broken): its answers get flag `drift` with drift
 * rule `live_audit` until `reinstateCertification`. Throws `RangeError` for
 * an unknown name.
 *
 * @example
 * ```ts
 * import { reinstateCertification, type Table, type TableState, withdrawCertification } from "./mod.ts";
 * declare const table: Table;
 * declare const state: TableState;
 * withdrawCertification(table, state, "intent"); // answers: flag drift, driftRule live_audit
 * reinstateCertification(table, state, "intent");
 * ```
 */
export function withdrawCertification(
  table: Table,
  state: TableState,
  name: string,
): void {
  state.question(questionOf(table, name)).withdrawn = true;
}

/**
 * Marks question `name` in `state` as one whose reference model answers
 * options the table never learned: its answers are no longer certified
 * (flag `options_changed`) for as long as this state serves (a table that
 * learned the options comes with a state of its own), or until marked
 * again with `added` false. A live decision does not lift it. Throws
 * `RangeError` for an unknown name.
 *
 * @example
 * ```ts
 * import { markOptionsAdded, type Table, type TableState } from "./mod.ts";
 * declare const table: Table;
 * declare const state: TableState;
 * markOptionsAdded(table, state, "intent"); // answers: flag options_changed
 * ```
 */
export function markOptionsAdded(
  table: Table,
  state: TableState,
  name: string,
  added = true,
): void {
  state.question(questionOf(table, name)).optionsAdded = added;
}

/**
 * Ends a withdrawal made by `withdrawCertification`. Throws `RangeError`
 * for an unknown name.
 *
 * @example
 * ```ts
 * import { reinstateCertification, type Table, type TableState } from "./mod.ts";
 * declare const table: Table;
 * declare const state: TableState;
 * reinstateCertification(table, state, "intent");
 * ```
 */
export function reinstateCertification(
  table: Table,
  state: TableState,
  name: string,
): void {
  state.question(questionOf(table, name)).withdrawn = false;
}
