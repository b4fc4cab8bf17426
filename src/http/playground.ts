/**
 * `POST /v1/playground`'s reply: what the table thinks of a text, with the
 * reason in words and the top three options (its body is
 * `playground_body.ts`). It reads the drift guard without feeding
 * it and is never counted as a decision. A question the table does not know
 * is answered `unsupported`, the reason naming the table's questions and a
 * close one when there is one.
 *
 * @module
 */

import {
  answerOf,
  type Assessment,
  type DriftState,
  reasonInWords,
  type TierContext,
  topOptions,
} from "../engine/mod.ts";
import type { PlaygroundResponse } from "../openapi/mod.ts";

/**
 * The playground response for an assessment, its reason naming the drift
 * guard's state, or the table's `questions` when the question is unknown;
 * with `tiers` (a second tier served for the question), the tier that
 * answered and the thresholds.
 */
export function playgroundResponse(
  a: Assessment,
  drift?: DriftState,
  questions?: readonly string[],
  tiers?: TierContext,
): PlaygroundResponse {
  const { answer } = a;
  const reply: PlaygroundResponse = {
    question: a.question,
    answer: answerOf(answer),
    confidence: answer.confidence,
    threshold: a.threshold,
    alpha: a.alpha,
    certified: answer.certified,
    flag: answer.flag,
    reason: reasonInWords(a, { drift, questions, tiers }),
    radius: answer.radius,
    top: topOptions(answer),
  };
  if (tiers !== undefined) reply.tier = tiers.tier;
  return reply;
}
