/**
 * The service's own shape, `POST /v1/decide`: a state, optional questions
 * with `criteria` subsets, optional `exposed`; answers keyed by question.
 *
 * @module
 */

import type { Answer, Assessment } from "../engine/answer.ts";
import { stateText } from "../engine/text.ts";
import { BodyShape, describe, isObject, setKey } from "./fields.ts";

/** One question to answer, with the options offered (absent: all). */
export interface Ask {
  name: string;
  options?: readonly string[] | undefined;
}

/** A checked `/v1/decide` body. */
export interface DecideRequest {
  /** The state as the table reads it. */
  text: string;
  /** The questions asked; null when the body names none (answer all). */
  asks: Ask[] | null;
  exposed: boolean;
}

/** The body `/v1/decide` needs, for error messages. */
export const DECIDE_BODY = new BodyShape(
  'a JSON object {"state": string or object, "questions"?: {"<question>": {"criteria"?: ["<option>", ...]}}, "exposed"?: boolean}',
);

/** Checks a `/v1/decide` body; throws a 400 naming what is wrong. */
export function parseDecide(body: unknown): DecideRequest {
  const shape = DECIDE_BODY;
  const o = shape.object(body);
  const state = o.state;
  if (state === undefined) throw shape.fail('"state" is missing');
  if (typeof state !== "string" && !isObject(state)) {
    throw shape.fail(
      `"state" must be a string or a JSON object, got ${describe(state)}`,
    );
  }
  let asks: Ask[] | null = null;
  if (o.questions !== undefined && o.questions !== null) {
    const questions = shape.objectField(o.questions, "questions");
    asks = [];
    for (const [name, entry] of Object.entries(questions)) {
      if (entry === null) {
        asks.push({ name });
        continue;
      }
      const e = shape.objectField(entry, `questions.${name}`);
      const criteria = e.criteria === undefined || e.criteria === null
        ? undefined
        : shape.strings(e.criteria, `questions.${name}.criteria`);
      asks.push({ name, options: criteria });
    }
  }
  const exposed = shape.optionalBoolean(o.exposed, "exposed") ?? false;
  return { text: stateText(state), asks, exposed };
}

/** The `answers` object of a `/v1/decide` response: the engine's answers keyed by question. */
export function decideAnswers(
  assessments: readonly Assessment[],
): Record<string, Answer> {
  const out: Record<string, Answer> = {};
  for (const a of assessments) setKey(out, a.question, a.answer);
  return out;
}
