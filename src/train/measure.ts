/**
 * The measure stage of training: each question's test part answered
 * exactly as serving would, for the report only.
 *
 * @module
 */

import {
  Answerer,
  disagrees,
  type QuestionTable,
  QUIET_GUARD,
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
  const answerer = new Answerer(table, {
    secondTier: embeddings !== undefined,
  });
  const tests = questions.map((q) =>
    measureAnswers(answerer, q.qa, texts, q.test, embeddings)
  );
  return { table, tests };
}

/**
 * Answers `indices` exactly as `answerer` serves them (single-text drift
 * rule included; the second tier where the table's only failing rule is
 * `low_confidence`, for a text with an embedding) and measures them. With
 * `embeddings`, a question with a second tier answerer is measured on the
 * indices that have one.
 */
export function measureAnswers(
  answerer: Answerer,
  qa: QuestionAnswers,
  texts: readonly string[],
  indices: readonly number[],
  embeddings?: readonly (Float32Array | undefined)[],
): Measurement {
  const meter = new Meter();
  const tiered = answerer.tiered &&
    answerer.table.byName.get(qa.name)?.semantic !== undefined;
  for (const i of indices) {
    const embedding = embeddings?.[i];
    if (tiered && embedding === undefined) continue;
    const text = answerer.prepare(texts[i]!);
    let a = answerer.answer(text, qa.name, {}, QUIET_GUARD);
    if (embedding !== undefined && answerer.asksSecondTier(a, false)) {
      a = answerer.answerWithSecondTier(
        a,
        embedding,
        answerer.tableInput(a, text),
      ).assessment;
    }
    meter.add(
      a.answer.certified,
      disagrees(a.answer, qa.options[qa.labels[i]!]!),
    );
  }
  return meter.result();
}
