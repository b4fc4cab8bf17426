/**
 * The decisions-API shape, `POST /v1/decisions`: `input` and an array of
 * typed `questions`; `answers` in question order, `usage` all zero.
 *
 * @module
 */

import { BodyShape, describe, isObject } from "./fields.ts";
import {
  type ModelQuestion,
  serviceOf,
  type TypedAssessment,
} from "./model_questions.ts";

/** A checked `/v1/decisions` body. */
export interface DecisionsRequest {
  /** Echoed in the response; `table` when the body names none. */
  model: string;
  text: string;
  questions: ModelQuestion[];
  exposed: boolean;
}

/** The body `/v1/decisions` needs, for error messages. */
export const DECISIONS_BODY = new BodyShape(
  'a JSON object {"model"?: string, "input": string, "questions": [{"type": "choice" | "predicate" | "noul", "name": string, "instructions"?: string, "choices"?: [{"value": string}, ...]}, ...]}',
);

/** Checks a `/v1/decisions` body; throws a 400 naming what is wrong. */
export function parseDecisions(body: unknown): DecisionsRequest {
  const shape = DECISIONS_BODY;
  const o = shape.object(body);
  const model = shape.optionalString(o.model, "model") ?? "table";
  if (o.input === undefined) throw shape.fail('"input" is missing');
  const text = shape.string(o.input, "input");
  if (o.questions === undefined) throw shape.fail('"questions" is missing');
  const questions = shape.array(o.questions, "questions").map(
    (item, i): ModelQuestion => {
      const at = `questions[${i}]`;
      const q = shape.objectField(item, at);
      if (q.type === undefined) throw shape.fail(`"${at}.type" is missing`);
      const type = shape.string(q.type, `${at}.type`);
      if (q.name === undefined) throw shape.fail(`"${at}.name" is missing`);
      const name = shape.string(q.name, `${at}.name`);
      shape.optionalString(q.instructions, `${at}.instructions`);
      let options: string[] | undefined;
      if (q.choices !== undefined && q.choices !== null) {
        options = shape.array(q.choices, `${at}.choices`).map((c, j) => {
          const field = `${at}.choices[${j}]`;
          if (typeof c === "string") return c;
          if (!isObject(c)) {
            throw shape.fail(
              `"${field}" must be an object {"value": string}, got ${
                describe(c)
              }`,
            );
          }
          return shape.string(c.value, `${field}.value`);
        });
      }
      return { name, type, options };
    },
  );
  const exposed = shape.optionalBoolean(o.exposed, "exposed") ?? false;
  return { model, text, questions, exposed };
}

/** One element of the response's `answers` array. */
export function decisionsAnswer(
  { type, assessment: a }: TypedAssessment,
): Record<string, unknown> {
  const { answer } = a;
  const service = serviceOf(a);
  if (answer.flag === "unsupported") {
    return { type, name: a.question, confidence: answer.confidence, service };
  }
  if (answer.choice !== undefined) {
    const probabilities = Object.entries(answer.probabilities ?? {}).map((
      [value, probability],
    ) => ({
      value,
      probability,
    }));
    return {
      type,
      name: a.question,
      choice: answer.choice,
      confidence: answer.confidence,
      probabilities,
      service,
    };
  }
  const probability = answer.probability ?? 0;
  if (type === "noul") {
    return {
      type,
      name: a.question,
      confidence: answer.confidence,
      probability,
      noul: probability,
      answer: answer.answer ?? false,
      service,
    };
  }
  return {
    type,
    name: a.question,
    confidence: answer.confidence,
    probability,
    service,
  };
}

/** The `/v1/decisions` response. */
export function decisionsResponse(
  request: DecisionsRequest,
  answers: readonly TypedAssessment[],
  latencyUs: number,
): Record<string, unknown> {
  return {
    object: "decision",
    model: request.model,
    answers: answers.map(decisionsAnswer),
    usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
    service: { latency_us: latencyUs, source: "table" },
  };
}
