/**
 * The measure stage of training: each question's test part answered
 * exactly as serving would, for the report only.
 *
 * @module
 */

import {
  disagrees,
  type QuestionTable,
  QUIET_GUARD,
  ServedBundle,
  type Table,
} from "../engine/mod.ts";
import type { QuestionAnswers } from "../traces/mod.ts";
import { type Measurement, Meter } from "./meter.ts";

/** A question ready to be measured: the traces that answer it and its test part. */
export interface MeasuredQuestion {
  qa: QuestionAnswers;
  question: QuestionTable;
  /** Its test part. */
  test: readonly number[];
}

/**
 * The trained table (`base` with every question) and each question's test
 * figures, answered as the table will serve them: with `embeddings`, both
 * tiers as a server with an encoder serves them (on a sample, a question
 * with a second tier is measured on its embedded test traces only).
 */
export function measureStage(
  base: Table,
  questions: readonly MeasuredQuestion[],
  texts: readonly string[],
  embeddings?: readonly (Float32Array | undefined)[],
): { table: Table; tests: Measurement[] } {
  const table: Table = {
    ...base,
    questions: questions.map((q) => q.question),
    byName: new Map(questions.map((q) => [q.question.name, q.question])),
  };
  const served = new ServedBundle(table, {
    secondTier: embeddings !== undefined,
  });
  const tests = questions.map((q) =>
    measureAnswers(served, q.qa, texts, q.test, embeddings)
  );
  return { table, tests };
}

/**
 * Answers `indices` exactly as `served` serves them (single-text drift
 * rule included; the second tier where the table's only failing rule is
 * `low_confidence`, for a text with an embedding) and measures them. With
 * `embeddings`, a question with a second tier served is measured on the
 * indices that have one.
 */
export function measureAnswers(
  served: ServedBundle,
  qa: QuestionAnswers,
  texts: readonly string[],
  indices: readonly number[],
  embeddings?: readonly (Float32Array | undefined)[],
): Measurement {
  const meter = new Meter();
  const tiered = served.tiered &&
    served.table.byName.get(qa.name)?.semantic !== undefined;
  for (const i of indices) {
    const embedding = embeddings?.[i];
    if (tiered && embedding === undefined) continue;
    const text = served.prepare(texts[i]!);
    let a = served.answer(text, qa.name, {}, QUIET_GUARD);
    if (embedding !== undefined && served.asksSecondTier(a, false)) {
      a = served.answerWithSecondTier(
        a,
        embedding,
        served.tableInput(a, text),
      ).assessment;
    }
    meter.add(
      a.answer.certified,
      disagrees(a.answer, qa.options[qa.labels[i]!]!),
    );
  }
  return meter.result();
}
