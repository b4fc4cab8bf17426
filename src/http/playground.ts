/**
 * `POST /v1/playground`: what the table thinks of a text, with the reason in
 * words and the top three options. It reads the drift guard without feeding
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
  type Table,
  type TierContext,
  topOptions,
} from "../engine/mod.ts";
import { Type } from "@sinclair/typebox";
import { BodySpec, ObjectSpec, PARCEL } from "./body_spec.ts";
import { nullable } from "./openapi/schema_parts.ts";
import type { PlaygroundResponse } from "./openapi/decision_schemas.ts";

/** A checked playground body. */
export interface PlaygroundRequest {
  question: string;
  text: string;
}

/** The fields of a playground body. */
export const PLAYGROUND_OBJECT = new ObjectSpec({
  question: {
    schema: Type.Optional(nullable(Type.String(), {
      description:
        "A question of the bundle; may be left out when the bundle has exactly one.",
    })),
    words: "string (may be left out when the bundle has one question)",
    plain: true,
    aka: ["name"],
  },
  text: { schema: Type.String(), words: "string", aka: ["state", "input"] },
}, true);

/** The body of `/v1/playground`: what it needs (for error messages), its schema, its examples. */
export const PLAYGROUND_BODY = new BodySpec(
  `a JSON object ${PLAYGROUND_OBJECT.words}`,
  PLAYGROUND_OBJECT.schema,
  {
    topic: {
      summary: "One question of the demo bundle",
      value: { question: "topic", text: PARCEL },
    },
  },
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
  PLAYGROUND_OBJECT.check(shape, o);
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
