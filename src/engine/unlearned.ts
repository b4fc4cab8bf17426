/**
 * The answer to a question the table has not learned yet, for a service
 * that learns (`serve --learn`): never certified (flag `uncalibrated`,
 * after `empty_input` for an empty text), in the shape of the question's
 * kind, with a best guess that stands in for an answer: for a choice, the
 * option most often answered so far (the feedback's counts, or the offered
 * options in the order given), each option's probability its share of the
 * answers so far (uniform over the offered options before any); for a
 * yes/no question, the more frequent answer so far (no, at 0.5, before
 * any).
 *
 * @module
 */

import { DEFAULT_DRIFT } from "./drift.ts";
import { DEFAULT_FEATURIZER } from "./features.ts";
import type { PreparedText } from "./prepare.ts";
import type { Table } from "./table.ts";
import type { Assessment } from "./verdict.ts";

/** The bundle id of a table without questions: zeros (no bundle answered). */
export const NO_BUNDLE_ID = "0".repeat(64);

/**
 * A table that has learned nothing yet: no question, every word unseen, a
 * bundle id of zeros. A learning service serves it until its first
 * bundle: every question is then one it has not learned.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { tableWithoutQuestions } from "./unlearned.ts";
 * assert.deepEqual(tableWithoutQuestions().questions, []);
 * ```
 */
export function tableWithoutQuestions(): Table {
  const featurizer = { ...DEFAULT_FEATURIZER, buckets_log2: 10 };
  return {
    featurizer,
    settings: {
      min_radius: 2,
      serve_new_options: false,
      force_thresholds: {},
      drift: DEFAULT_DRIFT,
    },
    rowOf: new Int32Array(1 << featurizer.buckets_log2).fill(-1),
    rowCount: 0,
    questions: [],
    byName: new Map(),
    info: { bundle_id: NO_BUNDLE_ID },
  };
}

/** What is known of a question the table has not learned (from feedback, or the request). */
export interface UnlearnedQuestion {
  kind: "choice" | "yes_no";
  /**
   * A choice's options, with how many answers named each so far (0 for an
   * option only offered); for yes/no, `["true", "false"]` with their counts.
   */
  options: readonly string[];
  counts: readonly number[];
}

/**
 * The assessment of question `name`, which the table has not learned, for
 * `text` (see the module doc). With `offered` options (a choice narrowed by
 * the request), the answer is over them alone.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { unlearnedAssessment } from "./unlearned.ts";
 * const text = { empty: false, novelty: 1 } as Parameters<typeof unlearnedAssessment>[2];
 * const a = unlearnedAssessment("intent", {
 *   kind: "choice", options: ["refund", "card"], counts: [1, 3],
 * }, text);
 * assert.equal(a.answer.flag, "uncalibrated");
 * assert.equal(a.answer.kind === "choice" && a.answer.choice, "card");
 * assert.equal(a.answer.confidence, 0.75);
 * ```
 */
export function unlearnedAssessment(
  name: string,
  question: UnlearnedQuestion,
  text: Pick<PreparedText, "empty" | "novelty">,
  offered?: readonly string[],
): Assessment {
  const verdict = {
    certified: false,
    flag: text.empty ? "empty_input" as const : "uncalibrated" as const,
    driftRule: null,
    radius: null,
  };
  const base = {
    question: name,
    slot: -1,
    threshold: null,
    alpha: null,
    scopeScore: null,
    driftScore: null,
    novelty: text.novelty,
    suggestion: null,
  };
  if (question.kind === "yes_no") {
    const yes = question.counts[question.options.indexOf("true")] ?? 0;
    const no = question.counts[question.options.indexOf("false")] ?? 0;
    const probability = yes + no === 0 ? 0.5 : yes / (yes + no);
    const answer = probability > 0.5;
    const confidence = answer ? probability : 1 - probability;
    return {
      ...base,
      answer: { ...verdict, kind: "yes_no", answer, probability, confidence },
      fullConfidence: confidence,
    };
  }
  const known = new Map(question.options.map((o, i) => [o, i]));
  const options = offered !== undefined && offered.length > 0
    ? offered
    : question.options;
  const counts = options.map((o) => question.counts[known.get(o) ?? -1] ?? 0);
  const total = counts.reduce((a, b) => a + b, 0);
  const probabilities = counts.map((c) =>
    total === 0 ? 1 / options.length : c / total
  );
  let chosen = 0;
  for (let i = 1; i < options.length; i++) {
    if (probabilities[i]! > probabilities[chosen]!) chosen = i;
  }
  const confidence = probabilities[chosen] ?? 0;
  return {
    ...base,
    answer: {
      ...verdict,
      kind: "choice",
      choice: options[chosen] ?? "",
      options,
      optionIndices: options.map(() => -1),
      chosen,
      probabilities,
      confidence,
    },
    fullConfidence: confidence,
  };
}
