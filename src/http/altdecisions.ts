/**
 * The alternate decision-model shape, `POST /v1/altdecisions`: a `state`
 * and `questions` keyed by name with `criteria` objects; `answers` keyed by
 * name, `latency_ms`.
 *
 * @module
 */

import { stateText } from "../engine/text.ts";
import { BodyShape, describe, isObject, setKey } from "./fields.ts";
import {
  type ModelQuestion,
  serviceOf,
  type TypedAssessment,
} from "./model_questions.ts";

/** A checked `/v1/altdecisions` body. */
export interface AltDecisionsRequest {
  /** Echoed in the response; `table` when the body names none. */
  model: string;
  text: string;
  questions: ModelQuestion[];
  exposed: boolean;
}

/** The body `/v1/altdecisions` needs, for error messages. */
export const ALT_BODY = new BodyShape(
  'a JSON object {"model"?: string, "state": string, "questions": {"<name>": {"type": "choice" | "predicate" | "noul", "instructions"?: string, "criteria"?: {"<option>": "<description>", ...}}, ...}}',
);

/** Checks a `/v1/altdecisions` body; throws a 400 naming what is wrong. */
export function parseAltDecisions(body: unknown): AltDecisionsRequest {
  const shape = ALT_BODY;
  const o = shape.object(body);
  const model = shape.optionalString(o.model, "model") ?? "table";
  if (o.state === undefined) throw shape.fail('"state" is missing');
  if (typeof o.state !== "string" && !isObject(o.state)) {
    throw shape.fail(
      `"state" must be a string or a JSON object, got ${describe(o.state)}`,
    );
  }
  const text = stateText(o.state);
  if (o.questions === undefined) throw shape.fail('"questions" is missing');
  const entries = Object.entries(shape.objectField(o.questions, "questions"));
  const questions = entries.map(([name, entry]): ModelQuestion => {
    const at = `questions.${name}`;
    const q = shape.objectField(entry, at);
    if (q.type === undefined) throw shape.fail(`"${at}.type" is missing`);
    const type = shape.string(q.type, `${at}.type`);
    shape.optionalString(q.instructions, `${at}.instructions`);
    let options: string[] | undefined;
    if (q.criteria !== undefined && q.criteria !== null) {
      if (Array.isArray(q.criteria)) {
        options = shape.strings(q.criteria, `${at}.criteria`);
      } else {
        const criteria = shape.objectField(q.criteria, `${at}.criteria`);
        options = Object.keys(criteria);
        for (const option of options) {
          shape.string(criteria[option], `${at}.criteria.${option}`);
        }
      }
    }
    return { name, type, options };
  });
  const exposed = shape.optionalBoolean(o.exposed, "exposed") ?? false;
  return { model, text, questions, exposed };
}

/** One value of the response's `answers` object. */
export function altAnswer(
  { type, assessment: a }: TypedAssessment,
): Record<string, unknown> {
  const { answer } = a;
  const service = serviceOf(a);
  if (answer.flag === "unsupported") {
    return { type, confidence: answer.confidence, service };
  }
  if (answer.choice !== undefined) {
    return {
      type,
      choice: answer.choice,
      confidence: answer.confidence,
      probabilities: answer.probabilities ?? {},
      service,
    };
  }
  const probability = answer.probability ?? 0;
  if (type === "noul") {
    return {
      type,
      confidence: answer.confidence,
      probability,
      noul: probability,
      answer: answer.answer ?? false,
      service,
    };
  }
  return { type, confidence: answer.confidence, probability, service };
}

/** The `/v1/altdecisions` response. */
export function altResponse(
  request: AltDecisionsRequest,
  answers: readonly TypedAssessment[],
  latencyUs: number,
): Record<string, unknown> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const t of answers) setKey(out, t.assessment.question, altAnswer(t));
  return {
    model: request.model,
    answers: out,
    // Integer over a power of ten: prints as 0.6536, not 0.6536000000000001.
    latency_ms: Math.round(latencyUs * 10) / 10000,
    service: { latency_us: latencyUs, source: "table" },
  };
}
