/**
 * The table a service answers from (`ServiceTable`), with everything that
 * belongs to it: the engine's `Answerer` (the table, its serving state,
 * its drift guard, the second tier's thresholds), a read-only view of the
 * guard for the playground, the reply fragments encoded from its names and
 * the encoder's queue its second tier is asked through. A request reads
 * the service table once, at its start, so replacing it (a reload) is one
 * assignment between requests. `predict` answers from one too.
 *
 * @module
 */

import type { EncoderQueue } from "../encoder/mod.ts";
import {
  Answerer,
  type DriftGuard,
  type DriftMonitor,
  hasSecondTier,
  peekGuard,
  type Table,
  type TableState,
} from "../engine/mod.ts";
import { type QuestionFragments, replyFragments } from "./fragments.ts";

/** One served table and what belongs to it. */
export interface ServiceTable {
  /** The engine's served object: the table, its state, its guard, the second tier's thresholds. */
  readonly answerer: Answerer;
  readonly table: Table;
  /** The serving state answers are made with (the table itself stays constant). */
  readonly state: TableState;
  /** The online drift guard the decision routes feed. */
  readonly monitor: DriftMonitor;
  /** The same guard, read without feeding it (playground). */
  readonly peek: DriftGuard;
  /** Per question position, its names pre-encoded for the replies. */
  readonly fragments: readonly QuestionFragments[];
  /** The table's question names, in order. */
  readonly questionNames: readonly string[];
  /**
   * The encoder's queue this table's second tier is served with: the
   * service's when a question of the table has a second tier, else null (a
   * table-only bundle never touches it).
   */
  readonly second: EncoderQueue | null;
  /**
   * Per question position, the second tier's threshold in force (its
   * calibrated `L` unless its live certificate moved it); null without one.
   */
  readonly semanticThresholds: readonly (number | null)[];
}

/**
 * Everything needed to serve `table`: its serving `state` (a new one with
 * the default word cache unless given), a new drift guard from its
 * settings unless one is given, its reply fragments (built now, not per
 * request), and `second` when a question of the table has a second tier
 * (whose threshold `L` is then put in force for both tiers). With
 * `secondTier` true and no `second`, the engine serves the second tiers
 * (thresholds and all) and the caller embeds the texts itself (`predict`).
 */
export function serviceTable(
  table: Table,
  monitor?: DriftMonitor,
  state?: TableState,
  second?: EncoderQueue | null,
  secondTier: boolean = second != null,
): ServiceTable {
  const tiered = second != null && hasSecondTier(table) ? second : null;
  const answerer = new Answerer(table, {
    state,
    monitor,
    secondTier: secondTier && hasSecondTier(table),
  });
  return {
    answerer,
    table,
    state: answerer.state,
    monitor: answerer.monitor,
    peek: peekGuard(answerer.monitor),
    fragments: replyFragments(table),
    questionNames: table.questions.map((q) => q.name),
    second: tiered,
    semanticThresholds: answerer.semanticThresholds,
  };
}
