/**
 * Serving both tiers: when a server asks the second tier for a table
 * answer, and what the answer becomes once the text's embedding is known.
 * Pure: the embedding and the second tier's threshold in force are inputs.
 *
 * The second tier is asked only where the table's one failing rule is its
 * confidence (flag `low_confidence`), the question has a calibrated second
 * tier and the request is not `exposed` (the radius rule has no
 * counterpart for the second tier). Every other rule that withholds the
 * table (empty text, options changed or removed, uncalibrated, drift, the
 * out-of-scope rule, a live withdrawal) withholds both tiers: those
 * answers never reach this module.
 *
 * @module
 */

import {
  semanticAssess,
  type SemanticAssessment,
  twoTierVerdict,
} from "./semantic.ts";
import type { QuestionTable, Table } from "./table.ts";
import type { Answer, Assessment } from "./verdict.ts";

/** Which tier an answer comes from. */
export type AnsweringTier = "table" | "semantic";

/** True when a question of `table` has a second tier. */
export function hasSecondTier(table: Table): boolean {
  return table.questions.some((q) => q.semantic !== undefined);
}

/**
 * True when a server should ask the second tier for `a`: the table
 * withheld it for low confidence alone, its question has a calibrated
 * second tier, and the request is not `exposed`.
 */
export function asksSecondTier(
  table: Table,
  a: Assessment,
  exposed: boolean,
): boolean {
  if (exposed || a.slot < 0) return false;
  const { answer } = a;
  if (answer.certified || answer.flag !== "low_confidence") return false;
  const tier = table.questions[a.slot]?.semantic;
  return tier !== undefined && tier.calibration.threshold !== null;
}

/** A question's thresholds, named for what each is (see `questionThresholds`). */
export interface QuestionThresholds {
  /**
   * The one the answers are certified against when served: the two-tier
   * rule's `L` when the second tier is served, else the table's own
   * (null: never certified). The live certificate may move it later.
   */
  inForce: number | null;
  /** The table's own calibrated threshold: what a server without the second tier uses. */
  table: number | null;
  /** The two-tier rule's threshold `L` (both tiers together); null without a second tier. */
  twoTier: number | null;
}

/**
 * The thresholds of question `q` as a bundle states them, with the one a
 * server puts in force: `L` when it serves the question's second tier
 * (`secondTierServed`, true by default: `serve`, `predict` and `eval`
 * do, unless told not to), else the table's own.
 *
 * @example
 * ```ts
 * import { questionThresholds, type QuestionTable } from "./mod.ts";
 * declare const q: QuestionTable;
 * const t = questionThresholds(q);
 * t.inForce === t.table || t.inForce === t.twoTier; // true
 * ```
 */
export function questionThresholds(
  q: QuestionTable,
  secondTierServed = true,
): QuestionThresholds {
  const table = q.calibration.threshold;
  const twoTier = q.semantic?.calibration.threshold ?? null;
  return {
    inForce: secondTierServed && twoTier !== null ? twoTier : table,
    table,
    twoTier,
  };
}

/** An answer after the second tier was asked. */
export interface TieredAssessment {
  /** The answer given: the second tier's, or the table's when the novelty guard withheld the text. */
  assessment: Assessment;
  /** Which tier the answer comes from. */
  tier: AnsweringTier;
  /** What the second tier said (over all options). */
  semantic: SemanticAssessment;
}

/**
 * The answer to `a` (for which `asksSecondTier` held) once the text's
 * `embedding` is known (with the table's probabilities over all options,
 * `fullProbabilities`, when the tier reads them), certified by the one two-tier rule against
 * `threshold`, the second tier's threshold in force (null: never
 * certified). The table failed its own threshold already, so only the
 * second tier's confidence is compared here.
 *
 * - When the novelty guard withholds the text, the table's answer stands
 *   (tier `table`, flag `low_confidence`).
 * - Otherwise the answer is the second tier's (tier `semantic`): its best
 *   option among those offered, certified when its full-option confidence
 *   reaches `threshold` and its full-option best is offered (else flag
 *   `option_removed`, as the table's own rule). Its `radius` is the
 *   table's when both tiers give the same answer, else 0 (the word
 *   insertions that flip the table say nothing of the second tier).
 */
export function answerWithSecondTier(
  table: Table,
  a: Assessment,
  embedding: ArrayLike<number>,
  threshold: number | null,
  tableProbabilities?: ArrayLike<number>,
): TieredAssessment {
  const q = table.questions[a.slot]!;
  const tier = q.semantic!;
  const full = semanticAssess(tier, embedding, undefined, tableProbabilities);
  if (full.novel) return { assessment: a, tier: "table", semantic: full };
  const { answer } = a;
  const known = answer.kind === "choice" && answer.optionIndices !== null
    ? answer.optionIndices.filter((i) => i >= 0)
    : null;
  const removed = known !== null && !known.includes(full.best);
  const verdict = twoTierVerdict(
    { table: -1, semantic: full.confidence },
    threshold,
  );
  const certified = verdict === "semantic" && !removed;
  const flag = certified ? null : removed ? "option_removed" : "low_confidence";
  let given: Answer;
  if (answer.kind === "choice") {
    let best = full.best;
    let probabilities: number[];
    let confidence = full.confidence;
    if (known === null) probabilities = Array.from(full.probabilities);
    else {
      let sum = 0;
      for (const i of known) sum += full.probabilities[i]!;
      probabilities = answer.options.map((_, j) => {
        const i = answer.optionIndices![j]!;
        return i < 0 || sum === 0 ? 0 : full.probabilities[i]! / sum;
      });
      best = known[0]!;
      for (const i of known) {
        if (full.probabilities[i]! > full.probabilities[best]!) best = i;
      }
      confidence = sum === 0 ? 0 : full.probabilities[best]! / sum;
    }
    const chosen = known === null ? best : answer.optionIndices!.indexOf(best);
    given = {
      kind: "choice",
      choice: q.options[best]!,
      confidence,
      certified,
      flag,
      driftRule: null,
      radius: best === (answer.optionIndices?.[answer.chosen] ?? answer.chosen)
        ? answer.radius
        : 0,
      options: answer.options,
      optionIndices: answer.optionIndices,
      chosen,
      probabilities,
    };
  } else if (answer.kind === "yes_no") {
    const yes = full.best === 0;
    given = {
      kind: "yes_no",
      answer: yes,
      confidence: full.confidence,
      certified,
      flag,
      driftRule: null,
      radius: yes === answer.answer ? answer.radius : 0,
      probability: full.probabilities[0]!,
    };
  } else return { assessment: a, tier: "table", semantic: full };
  return {
    assessment: {
      ...a,
      answer: given,
      threshold,
      fullConfidence: full.confidence,
    },
    tier: "semantic",
    semantic: full,
  };
}
