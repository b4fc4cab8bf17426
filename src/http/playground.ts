/**
 * `POST /v1/playground`: what the table thinks of a text, with the reason in
 * words and the top three options. It reads the drift guard without feeding
 * it and is never counted as a decision. A question the table does not know
 * is answered `unsupported`, the reason naming the table's questions and a
 * close one when there is one.
 *
 * @module
 */

import { type Assessment, topOptions } from "../engine/answer.ts";
import { answerOf } from "../engine/verdict.ts";
import type { DriftState } from "../engine/drift.ts";
import { reasonInWords } from "../engine/reason.ts";
import type { Table } from "../engine/table.ts";
import { BodyShape } from "./fields.ts";
import { PLAYGROUND_FIELDS, SYNONYMS, unknownField } from "./known_fields.ts";
import type { PlaygroundResponse } from "./openapi/decision_schemas.ts";

/** A checked playground body. */
export interface PlaygroundRequest {
  question: string;
  text: string;
}

export type { PlaygroundResponse };

/** The body the playground needs, for error messages. */
export const PLAYGROUND_BODY = new BodyShape(
  'a JSON object {"question": string (may be left out when the bundle has one question), "text": string}',
);

/**
 * Checks a playground body against `table`: a missing `question` is the
 * only question of a one-question bundle, else a 400.
 */
export function parsePlayground(
  body: unknown,
  table: Table,
): PlaygroundRequest {
  const shape = PLAYGROUND_BODY;
  const o = shape.object(body);
  for (const key in o) {
    if (key === "question" || key === "text") continue;
    throw unknownField(shape, "", key, PLAYGROUND_FIELDS, SYNONYMS.playground);
  }
  if (o.text === undefined) throw shape.fail('"text" is missing');
  const text = shape.string(o.text, "text");
  let question = shape.optionalString(o.question, "question");
  if (question === undefined) {
    if (table.questions.length !== 1) {
      throw shape.fail(
        `"question" is missing and the bundle has ${table.questions.length} questions (${
          names(table)
        })`,
      );
    }
    question = table.questions[0]!.name;
  }
  return { question, text };
}

function names(table: Table): string {
  return table.questions.map((q) => q.name).join(", ");
}

/**
 * The playground response for an assessment, its reason naming the drift
 * guard's state, or the table's `questions` when the question is unknown.
 */
export function playgroundResponse(
  a: Assessment,
  drift?: DriftState,
  questions?: readonly string[],
): PlaygroundResponse {
  const { answer } = a;
  return {
    question: a.question,
    answer: answerOf(answer),
    confidence: answer.confidence,
    threshold: a.threshold,
    alpha: a.alpha,
    certified: answer.certified,
    flag: answer.flag,
    reason: reasonInWords(a, { drift, questions }),
    radius: answer.radius,
    top: topOptions(answer),
  };
}
