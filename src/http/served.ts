/**
 * The table a service answers from, with everything that belongs to it:
 * its serving state (word cache, scratch, thresholds in force), its drift
 * guard, a read-only view of the guard for the playground, and
 * the reply fragments encoded from its names. A request reads the served
 * table once, at its start, so replacing it (a reload) is one assignment
 * between requests.
 *
 * @module
 */

import { type DriftGuard, DriftMonitor, peekGuard } from "../engine/drift.ts";
import { TableState } from "../engine/state.ts";
import type { Table } from "../engine/table.ts";
import { type QuestionFragments, replyFragments } from "./fragments.ts";

/** One served table and what belongs to it. */
export interface ServedTable {
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
}

/**
 * Everything needed to serve `table`: its serving `state` (a new one with
 * the default word cache unless given), a new drift guard from its
 * settings unless one is given, and its reply fragments (built now, not
 * per request).
 */
export function serveTable(
  table: Table,
  monitor?: DriftMonitor,
  state?: TableState,
): ServedTable {
  const guard = monitor ?? new DriftMonitor(table.settings.drift);
  return {
    table,
    state: state ?? new TableState(table),
    monitor: guard,
    peek: peekGuard(guard),
    fragments: replyFragments(table),
    questionNames: table.questions.map((q) => q.name),
  };
}
