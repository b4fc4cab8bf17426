/**
 * The measure stage of training: each question's test part answered
 * exactly as serving would, for the report only.
 *
 * @module
 */

import {
  assess,
  disagrees,
  fullProbabilities,
  prepareText,
  type QuestionTable,
  QUIET_GUARD,
  semanticAssess,
  setThresholdInForce,
  type Table,
  TableState,
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
 * figures, answered as the table will serve them.
 */
export function measureStage(
  base: Table,
  questions: readonly MeasuredQuestion[],
  texts: readonly string[],
  embeddings?: readonly Float32Array[],
): { table: Table; tests: Measurement[] } {
  const table: Table = {
    ...base,
    questions: questions.map((q) => q.question),
    byName: new Map(questions.map((q) => [q.question.name, q.question])),
  };
  const state = new TableState(table);
  const tests = questions.map((q) =>
    measureAnswers(table, state, q.qa, texts, q.test, embeddings)
  );
  return { table, tests };
}

/**
 * Answers `indices` exactly as serving would (single-text drift rule
 * included; the second tier where the table's only failing rule is
 * `low_confidence`) and measures them.
 */
export function measureAnswers(
  table: Table,
  state: TableState,
  qa: QuestionAnswers,
  texts: readonly string[],
  indices: readonly number[],
  embeddings?: readonly Float32Array[],
): Measurement {
  const meter = new Meter();
  const tier = table.byName.get(qa.name)?.semantic;
  const threshold = tier?.calibration.threshold ?? null;
  // Both tiers are certified against the two-tier rule's threshold.
  if (tier !== undefined && embeddings !== undefined) {
    setThresholdInForce(table, state, qa.name, threshold);
  }
  for (const i of indices) {
    const text = prepareText(table, state, texts[i]!);
    const a = assess(table, state, text, qa.name, {}, QUIET_GUARD).answer;
    if (
      !a.certified && a.flag === "low_confidence" && tier !== undefined &&
      embeddings !== undefined && threshold !== null
    ) {
      const q = table.byName.get(qa.name)!;
      const s = semanticAssess(
        tier,
        embeddings[i]!,
        undefined,
        fullProbabilities(table, state, text, q),
      );
      if (!s.novel && s.confidence >= threshold) {
        meter.add(true, s.best !== qa.labels[i]);
        continue;
      }
    }
    meter.add(a.certified, disagrees(a, qa.options[qa.labels[i]!]!));
  }
  return meter.result();
}
