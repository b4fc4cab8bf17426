/**
 * What one bundle answers with, as one object: the table, its serving
 * state, its drift guard and, when the bundle is served with its second
 * tier, the second tier's thresholds in force. It answers a question about
 * a text with the table, says when the second tier is to be asked, and
 * answers with it once the text's embedding is known. A server keeps one
 * and replaces it whole on a reload. Pure: the embedding is an input (the
 * encoder is an edge), and nothing here reads a clock or does I/O.
 *
 * @module
 */

import { type AskOptions, assess } from "./answer.ts";
import { type PreparedText, prepareText } from "./prepare.ts";
import { type DriftGuard, DriftMonitor } from "./drift.ts";
import { fullProbabilities } from "./semantic.ts";
import { setThresholdInForce, TableState } from "./state.ts";
import type { Table } from "./table.ts";
import {
  answerWithSecondTier,
  asksSecondTier,
  type TieredAssessment,
} from "./two_tier.ts";
import type { Assessment } from "./verdict.ts";

/** How a bundle is served. */
export interface ServedOptions {
  /** Its serving state; a new one with the default word cache by default. */
  state?: TableState | undefined;
  /** Its drift guard; a new one from the bundle's settings by default. */
  monitor?: DriftMonitor | undefined;
  /** Serve the questions' second tiers (the caller has an encoder); off by default. */
  secondTier?: boolean | undefined;
}

/**
 * One bundle as served (see the module doc).
 *
 * @example
 * ```ts
 * import { ServedBundle, type Table } from "./mod.ts";
 * declare const table: Table;
 * const served = new ServedBundle(table);
 * const a = served.answer(served.prepare("my card was stolen"), "intent");
 * served.asksSecondTier(a, false); // false: no second tier served
 * ```
 */
export class ServedBundle {
  readonly table: Table;
  /** The serving state answers are made with (the table itself stays constant). */
  readonly state: TableState;
  /** The online drift guard answers feed. */
  readonly monitor: DriftMonitor;
  /** True when the second tier is served (asked) for the questions that have one. */
  readonly tiered: boolean;
  /**
   * Per question position, the second tier's bundle threshold `L` (null
   * without a second tier served); the live certificate may serve another.
   */
  readonly semanticThresholds: readonly (number | null)[];

  /**
   * Serves `table`. With `options.secondTier` and a question with a
   * second tier, both tiers are certified against the two-tier rule's
   * threshold `L`, which is then put in force for the table too.
   */
  constructor(table: Table, options: ServedOptions = {}) {
    this.table = table;
    this.state = options.state ?? new TableState(table);
    this.monitor = options.monitor ?? new DriftMonitor(table.settings.drift);
    this.tiered = options.secondTier === true &&
      table.questions.some((q) => q.semantic !== undefined);
    this.semanticThresholds = table.questions.map((q) =>
      this.tiered ? q.semantic?.calibration.threshold ?? null : null
    );
    table.questions.forEach((q, i) => {
      const l = this.semanticThresholds[i]!;
      if (l !== null) setThresholdInForce(table, this.state, q.name, l);
    });
  }

  /** The text prepared for answering (the state's scratch: valid until the next call). */
  prepare(text: string): PreparedText {
    return prepareText(this.table, this.state, text);
  }

  /** The table's answer to question `name` about a prepared text (feeding `guard`, the drift guard by default). */
  answer(
    text: PreparedText,
    name: string,
    ask: AskOptions = {},
    guard: DriftGuard = this.monitor,
  ): Assessment {
    return assess(this.table, this.state, text, name, ask, guard);
  }

  /** True when the second tier is to be asked for `a` (see `asksSecondTier`; never when not served). */
  asksSecondTier(a: Assessment, exposed: boolean): boolean {
    return this.tiered && asksSecondTier(this.table, a, exposed);
  }

  /**
   * What the second tier reads beside the embedding for `a`: the table's
   * probabilities over all options of a prepared text, or undefined when
   * its tier does not read them. Take it before the prepared text is
   * reused.
   */
  tableInput(a: Assessment, text: PreparedText): Float64Array | undefined {
    const q = this.table.questions[a.slot]!;
    return q.semantic === undefined || q.semantic.tableWeight === 0
      ? undefined
      : fullProbabilities(this.table, this.state, text, q);
  }

  /**
   * The answer to `a` once its text's `embedding` is known, certified
   * against `threshold` (the second tier's threshold in force: the
   * bundle's `L` unless given), with `tableInput` taken before.
   */
  answerWithSecondTier(
    a: Assessment,
    embedding: ArrayLike<number>,
    tableInput: Float64Array | undefined,
    threshold: number | null = this.semanticThresholds[a.slot] ?? null,
  ): TieredAssessment {
    return answerWithSecondTier(
      this.table,
      a,
      embedding,
      threshold,
      tableInput,
    );
  }
}
