/**
 * What the engine says about one question asked of one text: the table's
 * answer and the certification verdict on it, as typed data. The HTTP layer
 * shapes it into each reply format; nothing here knows a JSON reply shape.
 *
 * @module
 */

/** Why an answer is not certified; see `answer.ts` for the order of the rules. */
export type Flag =
  | "low_confidence"
  | "drift"
  | "low_radius"
  | "uncalibrated"
  | "unsupported"
  | "empty_input"
  | "options_changed"
  | "option_removed"
  | "new_options_served"
  | "manual_threshold";

/** Every flag, in a fixed order (counters index flags by their position here). */
export const FLAGS: readonly Flag[] = [
  "low_confidence",
  "drift",
  "low_radius",
  "uncalibrated",
  "unsupported",
  "empty_input",
  "options_changed",
  "option_removed",
  "new_options_served",
  "manual_threshold",
];

/**
 * Which rule of the drift guard withheld certification (flag `drift`):
 * `live_audit` when serving withdrew the question's certification
 * (`withdrawCertification`), `alarm` when the online test's alarm stands,
 * `novelty` when the text alone looks foreign (its share of unseen features),
 * `out_of_scope` when it looks like none of the options (how its answer is
 * spread over them, see `scope.ts`).
 */
export type DriftRule = "live_audit" | "alarm" | "novelty" | "out_of_scope";

/**
 * What every answer carries, whatever its kind: the confidence and the
 * certification verdict on it.
 */
export interface AnswerVerdict {
  /** Probability of the answer given (over the offered options when narrowed). */
  confidence: number;
  certified: boolean;
  flag: Flag | null;
  /** Which drift rule withheld certification, when `flag` is `drift`; else null. */
  driftRule: DriftRule | null;
  /** Least number of inserted words that could change the answer; null when none can. */
  radius: number | null;
}

/** The answer to a choice question: the best option and every option's probability. */
export interface ChoiceAnswer extends AnswerVerdict {
  kind: "choice";
  /** Best option. */
  choice: string;
  /**
   * The options answered over, in reply order. All the learned options (the
   * question's own array), or when narrowed the offered learned options in
   * table order, then the offered options the table never learned, in the
   * order given.
   */
  options: readonly string[];
  /**
   * For each entry of `options`, its index among the learned options, or -1
   * for an option the table never learned. Null when `options` is every
   * learned option in table order.
   */
  optionIndices: readonly number[] | null;
  /** Position of `choice` in `options`. */
  chosen: number;
  /** `probabilities[i]` is the probability of `options[i]` (0 for an option never learned). */
  probabilities: readonly number[];
  /** A choice answer has no yes/no answer. */
  answer?: never;
}

/** The answer to a yes/no question. */
export interface YesNoAnswer extends AnswerVerdict {
  kind: "yes_no";
  /** Yes (true) or no (false). */
  answer: boolean;
  /** Probability of yes. */
  probability: number;
  /** A yes/no answer has no option. */
  choice?: never;
}

/**
 * No answer: a question the table cannot answer (flag `unsupported`, or
 * `empty_input` for an empty text); confidence 0, never certified.
 */
export interface NoAnswer extends AnswerVerdict {
  kind: "none";
  choice?: never;
  answer?: never;
}

/**
 * The table's answer to one question; `kind` says which it is, and
 * narrowing on it gives that kind's fields. Reading `choice` or `answer`
 * of another kind gives undefined.
 */
export type Answer = ChoiceAnswer | YesNoAnswer | NoAnswer;

/** What kind of answer a verdict carries. */
export type AnswerKind = Answer["kind"];

/**
 * The table's answer as a value: the option a choice answer gives, yes
 * (true) or no (false), or null when there is none. This is what a
 * reference model's answer is compared with.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { answerOf } from "./verdict.ts";
 * const verdict = {
 *   confidence: 0.9, certified: true, flag: null, driftRule: null, radius: 2,
 * };
 * assert.equal(answerOf({ ...verdict, kind: "yes_no", answer: false, probability: 0.1 }), false);
 * assert.equal(answerOf({ ...verdict, kind: "none" }), null);
 * ```
 */
export function answerOf(answer: Answer): string | boolean | null {
  return answer.kind === "choice"
    ? answer.choice
    : answer.kind === "yes_no"
    ? answer.answer
    : null;
}

/**
 * Whether an answer disagrees with the reference model's answer `option`,
 * spelled as traces spell it (`"true"`/`"false"` for yes/no): an answer of
 * kind `none` disagrees with every option.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { disagrees } from "./verdict.ts";
 * const verdict = {
 *   confidence: 0.9, certified: true, flag: null, driftRule: null, radius: 2,
 * };
 * assert.equal(disagrees({ ...verdict, kind: "yes_no", answer: false, probability: 0.1 }, "false"), false);
 * assert.equal(disagrees({ ...verdict, kind: "none" }, "refund"), true);
 * ```
 */
export function disagrees(answer: Answer, option: string): boolean {
  const given = answerOf(answer);
  return given === null || String(given) !== option;
}

/** An option and its probability, for the top options of an answer. */
export interface RankedOption {
  option: string;
  probability: number;
}

/** An answer together with what led to it. */
export interface Assessment {
  /** The question as asked. */
  question: string;
  /** Position of the question in the table, -1 for a name it does not know. */
  slot: number;
  answer: Answer;
  /**
   * Threshold in force for the question (the calibrated one unless serving
   * moved it), null when uncalibrated or unknown.
   */
  threshold: number | null;
  /** The question's target disagreement rate, null when unknown. */
  alpha: number | null;
  /** Confidence of the full-option answer (what the threshold is compared with). */
  fullConfidence: number;
  /**
   * The score the question's out-of-scope rule judges (the spread or the
   * energy of the full-option answer, see `scope.ts`); null when the
   * question has no such rule or the text is empty.
   */
  scopeScore: number | null;
  /** The drift score of the text, null when not scored. */
  driftScore: number | null;
  /** Share of the text's buckets no training text had. */
  novelty: number;
  /**
   * For a question name the table does not know: a known name that differs
   * only in case or by a slip of a letter or two, else null.
   */
  suggestion: string | null;
}
