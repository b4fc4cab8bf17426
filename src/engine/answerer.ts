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
import { fullProbabilities } from "./prepare.ts";
import { setThresholdInForce, TableState } from "./state.ts";
import type { Table } from "./table.ts";
import {
  type AnsweringTier,
  answerWithSecondTier,
  asksSecondTier,
  type TieredAssessment,
} from "./two_tier.ts";
import type { Assessment } from "./verdict.ts";

/**
 * What one text's answers ask of the second tier, taken while its prepared
 * text is still valid: the positions of the answers it is asked for, and
 * per position what the tier reads beside the embedding.
 */
export interface SecondTierAsk {
  /** Positions, among the text's answers, of the answers the second tier is asked for. */
  readonly positions: readonly number[];
  /** Per position, the table's probabilities the tier reads (`tableInput`). */
  readonly inputs: readonly (Float64Array | undefined)[];
}

/** What `answerAsked` did: per answer the tier that gave it, and how many the novelty guard left to the table. */
export interface AskedAnswers {
  tiers: AnsweringTier[];
  /** Answers the second tier was asked for. */
  asked: number;
  /** Of them, withheld by its novelty guard (the table's answer stood). */
  novel: number;
}

/** How an `Answerer` answers. */
export interface AnswererOptions {
  /** Its serving state; a new one with the default word cache by default. */
  state?: TableState | undefined;
  /** Its drift guard; a new one from the bundle's settings by default. */
  monitor?: DriftMonitor | undefined;
  /** Serve the questions' second tiers (the caller has an encoder); off by default. */
  secondTier?: boolean | undefined;
}

/**
 * What answers with one bundle (see the module doc): a server's, a
 * command's or a benchmark's.
 *
 * @example
 * ```ts
 * import { Answerer, type Table } from "./mod.ts";
 * declare const table: Table;
 * const answerer = new Answerer(table);
 * const a = answerer.answer(answerer.prepare("my card was stolen"), "intent");
 * answerer.asksSecondTier(a, false); // false: no second tier served
 * ```
 */
export class Answerer {
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
  constructor(table: Table, options: AnswererOptions = {}) {
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

  /**
   * The second tier's part of one text's `answers` (as the table gave
   * them for the prepared `text`): null when no answer asks it (or it is
   * not served), else the positions asked and the table's probabilities
   * each reads, taken now. Every door that answers a text asks this, then
   * `answerAsked` once the embedding is known, so they all answer alike.
   */
  secondTierAsk(
    answers: readonly Assessment[],
    text: PreparedText,
    exposed: boolean,
  ): SecondTierAsk | null {
    if (!this.tiered) return null;
    let positions: number[] | null = null;
    for (let i = 0; i < answers.length; i++) {
      if (this.asksSecondTier(answers[i]!, exposed)) (positions ??= []).push(i);
    }
    if (positions === null) return null;
    return {
      positions,
      inputs: positions.map((i) => this.tableInput(answers[i]!, text)),
    };
  }

  /**
   * Gives each answer of `ask` by the two-tier rule once the text's
   * `embedding` is known (replacing it in `answers`), the second tier
   * certified against `threshold(slot, L)` (its bundle threshold `L` by
   * default; a server passes the live certificate's). Without an
   * embedding (a shed or failed one), the table's answers stand. Returns
   * per answer the tier that gave it.
   */
  answerAsked(
    answers: Assessment[],
    ask: SecondTierAsk | null,
    embedding: ArrayLike<number> | null,
    threshold: (slot: number, bundle: number | null) => number | null = (
      _slot,
      bundle,
    ) => bundle,
  ): AskedAnswers {
    const tiers = answers.map((): AnsweringTier => "table");
    let novel = 0;
    if (ask === null || embedding === null) return { tiers, asked: 0, novel };
    ask.positions.forEach((i, j) => {
      const a = answers[i]!;
      const r = this.answerWithSecondTier(
        a,
        embedding,
        ask.inputs[j],
        threshold(a.slot, this.semanticThresholds[a.slot] ?? null),
      );
      if (r.tier === "table") novel++;
      answers[i] = r.assessment;
      tiers[i] = r.tier;
    });
    return { tiers, asked: ask.positions.length, novel };
  }
}
