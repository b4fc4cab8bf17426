/**
 * Options come from evidence, not from one item: an option the bundle in
 * force lacks (every option, for a question no bundle has yet) enters the
 * next bundle only when at least one of its labels is a decision the
 * service made (a feedback line naming its decision, `audit` or `id`: an id
 * the service signed for that text) or a trace the operator gave
 * (`--traces`, not a feedback line). A label a client made up (a feedback
 * item without an id) or sent under a forged id (never logged: see
 * `screenFeedback`) then adds no option, however often it comes; its other
 * answers still train. A question none of whose labels is backed (a client
 * that sends no ids at all) is learned as it is told, with the service
 * warning of the missing ids.
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
 * `traces` with the options `table` lacks (all of a question it lacks, or
 * of every question without a table) that no backed label names taken out
 * (their labels become "not answered"), for the questions some backed
 * label answers; `traces` itself when none is taken out.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { withBackedOptions } from "./backed_options.ts";
 * const traces = {
 *   texts: ["a", "b"], times: null, groups: null, groupNames: [],
 *   questions: [{ name: "q", kind: "choice" as const, options: ["x", "fake"], labels: Int32Array.of(0, 1) }],
 *   // A trace the operator gave, and a feedback item without an id.
 *   feedback: Uint8Array.of(0, 1),
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
  const feedback = traces.feedback ?? null;
  const named = traces.origins?.ids ?? new Map<number, string>();
  const backed = (row: number) => feedback?.[row] !== 1 || named.has(row);
  const questions = traces.questions.map((qa) => {
    if (qa.kind !== "choice") return qa;
    const q = table?.byName.get(qa.name);
    if (q !== undefined && q.kind !== "choice") return qa;
    // Every option is added while no bundle has the question.
    const lacked = qa.options.flatMap((o, i) =>
      q?.optionIndex.has(o) ? [] : [i]
    );
    if (lacked.length === 0) return qa;
    const evidence = new Set<number>();
    for (let row = 0; row < qa.labels.length; row++) {
      const l = qa.labels[row]!;
      if (l >= 0 && backed(row)) evidence.add(l);
    }
    // A question no decision of the service's ever answered (a client that
    // sends no ids) keeps what it was told: there is nothing to tell a
    // made-up option from its own, and the service warns of the missing ids.
    if (evidence.size === 0) return qa;
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
