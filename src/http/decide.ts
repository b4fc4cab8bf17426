/**
 * The service's own shape, `POST /v1/decide`: a state, optional questions
 * with `criteria` subsets, optional `exposed`; answers keyed by question.
 *
 * @module
 */

import type { AnsweringTier } from "../engine/two_tier.ts";
import type { Assessment } from "../engine/verdict.ts";
import {
  type Ask,
  type DecideRequest,
  type DecisionShape,
  MAX_OPTIONS,
  MAX_QUESTIONS,
} from "./decision_request.ts";
import { BodyShape, type JsonObject } from "./fields.ts";
import {
  DECIDE_FIELDS,
  DECIDE_QUESTION_FIELDS,
  SYNONYMS,
  unknownField,
} from "./known_fields.ts";
import type { JsonWriter } from "./json_writer.ts";
import {
  writeChoice,
  writeFlag,
  writeHint,
  writeProbabilities,
  writeQuestionKey,
} from "./reply_parts.ts";
import type { ServedTable } from "./served.ts";

/** The body `/v1/decide` needs, for error messages. */
export const DECIDE_BODY = new BodyShape(
  'a JSON object {"state": string or object, "questions"?: {"<question>": {"criteria"?: ["<option>", ...]}}, "exposed"?: boolean, "top"?: integer >= 1}',
);

/** Checks a `/v1/decide` body; throws a 400 naming what is wrong. */
export function parseDecide(body: unknown): DecideRequest {
  const shape = DECIDE_BODY;
  const o = shape.object(body);
  checkDecideFields(o);
  const text = shape.state(o.state, "state");
  let asks: Ask[] | null = null;
  if (o.questions !== undefined && o.questions !== null) {
    const questions = shape.objectField(o.questions, "questions");
    shape.atMost(Object.keys(questions).length, MAX_QUESTIONS, "questions");
    asks = [];
    for (const [name, entry] of Object.entries(questions)) {
      if (entry === null) {
        asks.push({ name, options: undefined, type: undefined });
        continue;
      }
      const e = shape.objectField(entry, `questions.${name}`);
      checkQuestionFields(e, name);
      const criteria = e.criteria === undefined || e.criteria === null
        ? undefined
        : shape.strings(
          e.criteria,
          `questions.${name}.criteria`,
          MAX_OPTIONS,
        );
      asks.push({ name, options: criteria, type: undefined });
    }
  }
  const exposed = shape.optionalBoolean(o.exposed, "exposed") ?? false;
  const top = shape.optionalCount(o.top, "top");
  return { text, asks, exposed, model: null, top };
}

/** Throws the 400 for the first field of the body `/v1/decide` does not know. */
function checkDecideFields(o: JsonObject): void {
  for (const key in o) {
    switch (key) {
      case "state":
      case "questions":
      case "exposed":
      case "top":
        continue;
    }
    throw unknownField(DECIDE_BODY, "", key, DECIDE_FIELDS, SYNONYMS.decide);
  }
}

/** Throws the 400 for the first field of question entry `name` that is not `criteria`. */
function checkQuestionFields(e: JsonObject, name: string): void {
  for (const key in e) {
    if (key === "criteria") continue;
    throw unknownField(
      DECIDE_BODY,
      `questions.${name}`,
      key,
      DECIDE_QUESTION_FIELDS,
      SYNONYMS.decideQuestion,
    );
  }
}

/**
 * Writes one answer in the service's own shape: `choice` or `answer`,
 * `confidence`, `certified`, `flag`, `radius`, `probabilities` or
 * `probability`, in that order; an answer for a question the table does
 * not know has no answer fields and a `hint`; `tier` (which tier answered)
 * follows when given (a bundle with a second tier), then `audit`. With
 * `top`, a choice answer's `probabilities` hold only the `top` most probable
 * options, the answer first.
 */
export function writeDecideAnswer(
  w: JsonWriter,
  served: ServedTable,
  a: Assessment,
  audit?: string,
  top: number | null = null,
  tier?: AnsweringTier,
): void {
  const { answer } = a;
  if (answer.kind === "choice") {
    w.ascii('{"choice":');
    writeChoice(w, served, a.slot, answer);
    w.ascii(',"confidence":');
  } else if (answer.kind === "yes_no") {
    w.ascii('{"answer":').boolean(answer.answer).ascii(',"confidence":');
  } else w.ascii('{"confidence":');
  w.number(answer.confidence).ascii(',"certified":').boolean(answer.certified);
  w.ascii(',"flag":');
  writeFlag(w, answer.flag);
  w.ascii(',"radius":');
  if (answer.radius === null) w.ascii("null");
  else w.number(answer.radius);
  if (answer.kind === "choice") {
    w.ascii(',"probabilities":');
    writeProbabilities(w, served, a.slot, answer, false, top);
  } else if (answer.kind === "yes_no") {
    w.ascii(',"probability":').number(answer.probability);
  } else writeHint(w, served, a);
  if (tier !== undefined) w.ascii(',"tier":').string(tier);
  if (audit !== undefined) w.ascii(',"audit":').string(audit);
  w.ascii("}");
}

/**
 * Writes the `/v1/decide` reply: `{"answers": {...}, "latency_us": n}`,
 * answers keyed by question in the order asked. `audits[i]`, when given,
 * is the audit id of answer `i`.
 */
export function writeDecideReply(
  w: JsonWriter,
  served: ServedTable,
  request: DecideRequest,
  answers: readonly Assessment[],
  latencyUs: number,
  audits?: readonly (string | undefined)[],
  tiers?: readonly AnsweringTier[],
): void {
  w.ascii('{"answers":{');
  for (let i = 0; i < answers.length; i++) {
    if (i > 0) w.ascii(",");
    const a = answers[i]!;
    writeQuestionKey(w, served, a);
    writeDecideAnswer(w, served, a, audits?.[i], request.top, tiers?.[i]);
  }
  w.ascii('},"latency_us":').number(latencyUs).ascii("}");
}

/** How `/v1/decide` reads its body and writes its reply. */
export const DECIDE_SHAPE: DecisionShape<DecideRequest> = {
  needed: DECIDE_BODY.needed,
  parse: parseDecide,
  write: writeDecideReply,
};
