/**
 * The alternate decision-model shape, `POST /v1/altdecisions`: a `state`
 * and `questions` keyed by name with `criteria` objects; `answers` keyed by
 * name, `latency_ms`.
 *
 * @module
 */

import type { AnsweringTier, Assessment } from "../engine/mod.ts";
import {
  type DecisionShape,
  MAX_OPTIONS,
  MAX_QUESTIONS,
  type ModelRequest,
  type TypedAsk,
} from "./decision_request.ts";
import { Type } from "@sinclair/typebox";
import { BodySpec, ObjectSpec, PARCEL } from "./body_spec.ts";
import {
  EXPOSED,
  INSTRUCTIONS,
  MODEL,
  QUESTION_TYPE,
  STATE,
  TOP,
} from "./decision_fields.ts";
import { recordOf, ref } from "./schema_parts.ts";
import type { JsonWriter } from "./json_writer.ts";
import { writeQuestionKey } from "./reply_parts.ts";
import type { ServiceTable } from "./service_table.ts";
import { writeModelAnswer } from "./model_answer.ts";

/** A question object of `/v1/altdecisions`. */
export const ALT_QUESTION = new ObjectSpec({
  type: QUESTION_TYPE,
  instructions: INSTRUCTIONS,
  criteria: {
    schema: Type.Optional(Type.Union([
      recordOf(Type.String()),
      Type.Array(Type.String()),
      Type.Null(),
    ], {
      description:
        "Offered options (option to description), narrowing a choice question; an array of option names is accepted too.",
    })),
    words: '{"<option>": "<description>", ...}',
    aka: ["choices", "options"],
  },
}, true);

/**
 * The top level of a `/v1/altdecisions` body: open (clients of such APIs
 * send fields of their own), and `exposed` and `top` are not shown in
 * messages.
 */
export const ALT_OBJECT = new ObjectSpec({
  model: MODEL,
  state: { ...STATE, words: "string" },
  questions: {
    schema: recordOf(ref("AltQuestion", ALT_QUESTION.schema), {
      description: "Keyed by question name.",
    }),
    words: `{"<name>": ${ALT_QUESTION.words}, ...}`,
  },
  exposed: { ...EXPOSED, words: null },
  top: { ...TOP, words: null },
}, false);

/** The body of `/v1/altdecisions`: what it needs (for error messages), its schema, its examples. */
export const ALT_BODY = new BodySpec(
  `a JSON object ${ALT_OBJECT.words}`,
  ALT_OBJECT.schema,
  {
    choiceAndPredicate: {
      summary: "A narrowed choice and a predicate question",
      value: {
        model: "m",
        state: PARCEL,
        questions: {
          topic: {
            type: "choice",
            instructions: "Which team should handle it?",
            criteria: {
              delivery: "about shipping",
              returns: "about returns",
            },
          },
          wants_human: {
            type: "predicate",
            instructions: "Does the customer ask for a person?",
          },
        },
      },
    },
  },
);

/** Checks a `/v1/altdecisions` body; throws a 400 naming what is wrong. */
export function parseAltDecisions(body: unknown): ModelRequest {
  const shape = ALT_BODY;
  const o = shape.object(body);
  const model = shape.optionalString(o.model, "model") ?? "table";
  const text = shape.state(o.state, "state");
  if (o.questions === undefined) throw shape.fail('"questions" is missing');
  const questions = shape.objectField(o.questions, "questions");
  shape.atMost(Object.keys(questions).length, MAX_QUESTIONS, "questions");
  const entries = Object.entries(questions);
  const asks = entries.map(([name, entry]): TypedAsk => {
    const at = `questions.${name}`;
    const q = shape.objectField(entry, at);
    const bad = ALT_QUESTION.unknownKey(q);
    if (bad !== null) throw ALT_QUESTION.unknown(shape, at, bad);
    if (q.type === undefined) throw shape.fail(`"${at}.type" is missing`);
    const type = shape.string(q.type, `${at}.type`);
    shape.optionalString(q.instructions, `${at}.instructions`);
    let options: string[] | undefined;
    if (q.criteria !== undefined && q.criteria !== null) {
      if (Array.isArray(q.criteria)) {
        options = shape.strings(q.criteria, `${at}.criteria`, MAX_OPTIONS);
      } else {
        const criteria = shape.objectField(q.criteria, `${at}.criteria`);
        options = Object.keys(criteria);
        shape.atMost(options.length, MAX_OPTIONS, `${at}.criteria`);
        for (const option of options) {
          shape.string(criteria[option], `${at}.criteria.${option}`);
        }
      }
    }
    return { name, options, type };
  });
  const exposed = shape.optionalBoolean(o.exposed, "exposed") ?? false;
  const top = shape.optionalCount(o.top, "top");
  return { text, asks, exposed, model, top };
}

/**
 * Writes the `/v1/altdecisions` reply: `model`, `answers` keyed by
 * question, `latency_ms`, `service`. `audits[i]`, when given, is the audit
 * id of answer `i` (in its `service`).
 */
export function writeAltReply(
  w: JsonWriter,
  served: ServiceTable,
  request: ModelRequest,
  answers: readonly Assessment[],
  latencyUs: number,
  audits?: readonly (string | undefined)[],
  tiers?: readonly AnsweringTier[],
): void {
  w.ascii('{"model":').string(request.model).ascii(',"answers":{');
  const { asks } = request;
  for (let i = 0; i < answers.length; i++) {
    if (i > 0) w.ascii(",");
    const a = answers[i]!;
    writeQuestionKey(w, served, a);
    writeModelAnswer(
      w,
      served,
      "alt",
      asks[i]!.type,
      a,
      audits?.[i],
      request.top,
      tiers?.[i],
    );
  }
  // An integer over a power of ten prints as 0.6536, not 0.6536000000000001.
  w.ascii('},"latency_ms":').number(Math.round(latencyUs * 10) / 10000);
  w.ascii(',"service":{"latency_us":').number(latencyUs).ascii(
    ',"source":"table"}}',
  );
}

/** How `/v1/altdecisions` reads its body and writes its reply. */
export const ALT_SHAPE: DecisionShape<ModelRequest> = {
  needed: ALT_BODY.needed,
  parse: parseAltDecisions,
  write: writeAltReply,
};
