/**
 * Scoring a question's held-out answers as serving would, for calibration
 * and for the learning curve's refits.
 *
 * @module
 */

import {
  assess,
  disagrees,
  prepareText,
  type QuestionTable,
  QUIET_GUARD,
  type Table,
  TableState,
} from "../engine/mod.ts";
import type { ScoredAnswers } from "./calibrate.ts";

/**
 * Answers the traces `indices` as serving would (the engine's `assess` on
 * question `q`, before calibration) and keeps what calibration reads: the
 * full-option confidence (0 for an empty text), whether the answer
 * disagrees with the trace's, the novelty and drift score, and, where the
 * question has an out-of-scope rule, the score it judges.
 */
export function scoreAnswers(
  base: Table,
  q: QuestionTable,
  labels: Int32Array,
  texts: readonly string[],
  indices: readonly number[],
): ScoredAnswers {
  const n = indices.length;
  const scoped = q.drift.scope.score !== null;
  const scored: ScoredAnswers = {
    confidences: new Float64Array(n),
    wrong: new Uint8Array(n),
    novelty: new Float32Array(n),
    driftScores: new Float32Array(n),
    scopeScores: new Float32Array(scoped ? n : 0),
  };
  const table: Table = {
    ...base,
    questions: [q],
    byName: new Map([[q.name, q]]),
  };
  const state = new TableState(table);
  for (let t = 0; t < n; t++) {
    const text = prepareText(table, state, texts[indices[t]!]!);
    const a = assess(table, state, text, q.name, {}, QUIET_GUARD);
    scored.confidences[t] = text.empty ? 0 : a.fullConfidence;
    scored.wrong[t] = disagrees(a.answer, q.options[labels[indices[t]!]!]!)
      ? 1
      : 0;
    scored.novelty[t] = a.novelty;
    // An empty text is never certified: its drift score is the largest.
    scored.driftScores[t] = a.driftScore ?? 1;
    if (scoped) scored.scopeScores[t] = a.scopeScore ?? -Infinity;
  }
  scored.scopeScore = q.drift.scope.score;
  return scored;
}
