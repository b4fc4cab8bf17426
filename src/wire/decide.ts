/**
 * The service's own shape, `POST /v1/decide`: a state, optional questions
 * with `criteria` subsets, optional `exposed`; answers keyed by question.
 *
 * @module
 */

import type { AnsweringTier, Assessment } from "../engine/mod.ts";
import {
  type Ask,
  type DecideRequest,
  type DecisionShape,
  MAX_OPTIONS,
  MAX_QUESTIONS,
} from "./decision_request.ts";
import { Type } from "@sinclair/typebox";
import { BodySpec, ObjectSpec, PARCEL } from "./body_spec.ts";
import { EXPOSED, STATE, TOP } from "./decision_fields.ts";
import { nullable, recordOf } from "./schema_parts.ts";
import type { JsonWriter } from "./json_writer.ts";
import {
  writeChoice,
  writeFlag,
  writeHint,
  writeProbabilities,
  writeQuestionKey,
} from "./reply_parts.ts";
import type { ServiceTable } from "./service_table.ts";

/** A question entry of `/v1/decide`: the options it narrows a choice to. */
export const DECIDE_QUESTION = new ObjectSpec({
  criteria: {
    schema: Type.Optional(nullable(Type.Array(Type.String()), {
      description: "Offered options; empty or absent: all learned.",
    })),
    words: '["<option>", ...]',
    aka: ["choices", "options"],
  },
}, true);

/** The top level of a `/v1/decide` body. */
export const DECIDE_OBJECT = new ObjectSpec({
  state: STATE,
  questions: {
    schema: Type.Optional(nullable(
      recordOf(nullable(DECIDE_QUESTION.schema)),
      {
        description:
          "Answer only these questions (absent: all of the bundle's). An entry's criteria narrows a choice question to those options.",
      },
    )),
    words: `{"<question>": ${DECIDE_QUESTION.words}}`,
  },
  exposed: EXPOSED,
  top: TOP,
}, true);

/** The body of `/v1/decide`: what it needs (for error messages), its schema, its examples. */
export const DECIDE_BODY = new BodySpec(
  `a JSON object ${DECIDE_OBJECT.words}`,
  DECIDE_OBJECT.schema,
  {
    all: {
      summary: "Every question of the bundle",
      value: { state: PARCEL },
    },
    narrowed: {
      summary: "Two questions, the choice narrowed to two options",
      value: {
        state: PARCEL,
        questions: {
          topic: { criteria: ["delivery", "returns"] },
          wants_human: {},
        },
        exposed: false,
      },
    },
    objectState: {
      summary: "An object state, serialised as JSON",
      value: {
        state: { subject: "refund", body: "I sent the shoes back" },
        questions: { topic: null },
      },
    },
    unknownQuestion: {
      summary: "A question the bundle does not have",
      value: { state: PARCEL, questions: { mood: {} } },
    },
    top: {
      summary: "Only the two most probable options of a choice answer",
      value: { state: PARCEL, top: 2 },
    },
  },
);

/** Checks a `/v1/decide` body; throws a 400 naming what is wrong. */
export function parseDecide(body: unknown): DecideRequest {
  const shape = DECIDE_BODY;
  const o = shape.object(body);
  DECIDE_OBJECT.check(shape, o);
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
      const bad = DECIDE_QUESTION.unknownKey(e);
      if (bad !== null) {
        throw DECIDE_QUESTION.unknown(shape, `questions.${name}`, bad);
      }
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
  served: ServiceTable,
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
  if (audit !== undefined) {
    w.ascii(answer.certified ? ',"audit":' : ',"feedback_id":').string(audit);
  }
  w.ascii("}");
}

/**
 * Writes the `/v1/decide` reply: `{"answers": {...}, "latency_us": n}`,
 * answers keyed by question in the order asked, and `"reason"` after them
 * when there is no answer (`emptyReason`). `audits[i]`, when given,
 * is the audit id of answer `i`.
 */
export function writeDecideReply(
  w: JsonWriter,
  served: ServiceTable,
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
  w.ascii('},"latency_us":').number(latencyUs);
  if (answers.length === 0) {
    w.ascii(',"reason":').string(emptyReason(request));
  }
  w.ascii("}");
}

/**
 * Why a `/v1/decide` reply has no answers: the request named no question
 * and the service knows none yet (only a learning service can: it learns
 * its questions from feedback), or it named none in an empty `questions`.
 */
export function emptyReason(request: Pick<DecideRequest, "asks">): string {
  return request.asks === null
    ? 'The request names no question and this service knows none yet: a learning service (serve --learn) learns its questions from the feedback on answers it gave. Name the question until then, as in {"state": "...", "questions": {"intent": {}}}: it is answered (uncertified, with a feedback_id) and learned from the feedback.'
    : "The request's questions object is empty: name a question in it, or leave it out to be answered every question the service knows.";
}

/** How `/v1/decide` reads its body and writes its reply. */
export const DECIDE_SHAPE: DecisionShape<DecideRequest> = {
  needed: DECIDE_BODY.needed,
  parse: parseDecide,
  write: writeDecideReply,
};
