/**
 * Options come from evidence, not from one item: an option a question of
 * the bundle in force lacks enters the next bundle only when at least one
 * of its labels is a decision the service made (a feedback line naming its
 * decision, `audit` or `id`: an id the service signed for that text) or a
 * trace the operator gave (`--traces`, not a feedback line). A label a
 * client made up (a feedback item without an id) or sent under a forged id
 * (never logged: see `screenFeedback`) then adds no option, however often
 * it comes; its other answers still train.
 *
 * @module
 */

import type { Table } from "../engine/mod.ts";
import type { QuestionAnswers, TraceSet } from "../traces/mod.ts";

/** The trace set without the labels of options no decision backs, and those options per question. */
export interface BackedOptions {
  traces: TraceSet;
  /** Per question, the options dropped (absent when none). */
  dropped: Map<string, string[]>;
}

/**
 * `traces` with the options of `table`'s questions that `table` lacks and
 * that no backed label names taken out (their labels become "not
 * answered"); `traces` itself when none is. Nothing changes without a
 * table (a first bundle learns every option it is shown).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { withBackedOptions } from "./backed_options.ts";
 * const traces = {
 *   texts: ["a", "b"], times: null, groups: null, groupNames: [],
 *   questions: [{ name: "q", kind: "choice" as const, options: ["x", "fake"], labels: Int32Array.of(0, 1) }],
 *   feedback: Uint8Array.of(1, 1),
 * };
 * const table = { byName: new Map([["q", { kind: "choice", optionIndex: new Map([["x", 0]]) }]]) };
 * // deno-lint-ignore no-explicit-any
 * const { traces: kept, dropped } = withBackedOptions(traces, table as any);
 * assert.deepEqual(kept.questions[0]!.options, ["x"]);
 * assert.deepEqual([...kept.questions[0]!.labels], [0, -1]);
 * assert.deepEqual(dropped.get("q"), ["fake"]);
 * ```
 */
export function withBackedOptions(
  traces: TraceSet,
  table: Pick<Table, "byName"> | null,
): BackedOptions {
  const dropped = new Map<string, string[]>();
  if (table === null) return { traces, dropped };
  const feedback = traces.feedback ?? null;
  const named = traces.origins?.ids ?? new Map<number, string>();
  const backed = (row: number) => feedback?.[row] !== 1 || named.has(row);
  const questions = traces.questions.map((qa) => {
    const q = table.byName.get(qa.name);
    if (q === undefined || q.kind !== "choice" || qa.kind !== "choice") {
      return qa;
    }
    const lacked = qa.options.flatMap((o, i) =>
      q.optionIndex.has(o) ? [] : [i]
    );
    if (lacked.length === 0) return qa;
    const evidence = new Set<number>();
    for (let row = 0; row < qa.labels.length; row++) {
      const l = qa.labels[row]!;
      if (l >= 0 && backed(row)) evidence.add(l);
    }
    const drop = lacked.filter((i) => !evidence.has(i));
    if (drop.length === 0) return qa;
    dropped.set(qa.name, drop.map((i) => qa.options[i]!));
    return withoutOptions(qa, new Set(drop));
  });
  if (dropped.size === 0) return { traces, dropped };
  return { traces: { ...traces, questions }, dropped };
}

/** `qa` without the options at `drop`: their labels -1, the others renumbered. */
function withoutOptions(
  qa: QuestionAnswers,
  drop: ReadonlySet<number>,
): QuestionAnswers {
  const at = new Int32Array(qa.options.length);
  let next = 0;
  for (let i = 0; i < qa.options.length; i++) {
    at[i] = drop.has(i) ? -1 : next++;
  }
  return {
    ...qa,
    options: qa.options.filter((_, i) => !drop.has(i)),
    labels: qa.labels.map((l) => l < 0 ? l : at[l]!),
  };
}
