/**
 * The decisions-API shape, `POST /v1/decisions`: `input` and an array of
 * typed `questions`; `answers` in question order, `usage` all zero.
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
  TOP,
} from "./decision_fields.ts";
import { describe, isObject } from "./fields.ts";
import { nullable, ref } from "./schema_parts.ts";
import type { JsonWriter } from "./json_writer.ts";
import type { ServiceTable } from "./service_table.ts";
import { writeModelAnswer } from "./model_answer.ts";

/** A question object of `/v1/decisions`. */
export const DECISIONS_QUESTION = new ObjectSpec({
  type: QUESTION_TYPE,
  name: {
    schema: Type.String({ description: "A question of the bundle." }),
    words: "string",
  },
  instructions: INSTRUCTIONS,
  choices: {
    schema: Type.Optional(nullable(
      Type.Array(Type.Union([
        Type.Object({ value: Type.String() }),
        Type.String(),
      ])),
      {
        description:
          "Offered options, narrowing a choice question; empty or absent: all learned. Plain strings are accepted too.",
      },
    )),
    words: '[{"value": string}, ...]',
    aka: ["criteria", "options"],
  },
}, true);

/**
 * The top level of a `/v1/decisions` body: open (clients of such APIs send
 * fields of their own), and `exposed` and `top` are not shown in messages.
 */
export const DECISIONS_OBJECT = new ObjectSpec({
  model: MODEL,
  input: {
    schema: Type.String({ description: "The text to decide on." }),
    words: "string",
  },
  questions: {
    schema: Type.Array(ref("DecisionsQuestion", DECISIONS_QUESTION.schema)),
    words: `[${DECISIONS_QUESTION.words}, ...]`,
  },
  exposed: { ...EXPOSED, words: null },
  top: { ...TOP, words: null },
}, false);

/** The body of `/v1/decisions`: what it needs (for error messages), its schema, its examples. */
export const DECISIONS_BODY = new BodySpec(
  `a JSON object ${DECISIONS_OBJECT.words}`,
  DECISIONS_OBJECT.schema,
  {
    choiceAndNoul: {
      summary: "A narrowed choice and a noul question",
      value: {
        model: "gpt-x",
        input: PARCEL,
        questions: [
          {
            type: "choice",
            name: "topic",
            instructions: "Which team should handle it?",
            choices: [{ value: "delivery" }, { value: "returns" }],
          },
          {
            type: "noul",
            name: "wants_human",
            instructions: "Does the customer ask for a person?",
          },
        ],
      },
    },
    score: {
      summary: "A score question, which the table does not answer",
      value: {
        input: PARCEL,
        questions: [{ type: "score", name: "urgency" }],
      },
    },
  },
);

/** Checks a `/v1/decisions` body; throws a 400 naming what is wrong. */
export function parseDecisions(body: unknown): ModelRequest {
  const shape = DECISIONS_BODY;
  const o = shape.object(body);
  const model = shape.optionalString(o.model, "model") ?? "table";
  if (o.input === undefined) throw shape.fail('"input" is missing');
  const text = shape.string(o.input, "input");
  if (o.questions === undefined) throw shape.fail('"questions" is missing');
  const list = shape.array(o.questions, "questions");
  shape.atMost(list.length, MAX_QUESTIONS, "questions");
  const asks = list.map(
    (item, i): TypedAsk => {
      const at = `questions[${i}]`;
      const q = shape.objectField(item, at);
      const bad = DECISIONS_QUESTION.unknownKey(q);
      if (bad !== null) throw DECISIONS_QUESTION.unknown(shape, at, bad);
      if (q.type === undefined) throw shape.fail(`"${at}.type" is missing`);
      const type = shape.string(q.type, `${at}.type`);
      if (q.name === undefined) throw shape.fail(`"${at}.name" is missing`);
      const name = shape.string(q.name, `${at}.name`);
      shape.optionalString(q.instructions, `${at}.instructions`);
      let options: string[] | undefined;
      if (q.choices !== undefined && q.choices !== null) {
        const choices = shape.array(q.choices, `${at}.choices`);
        shape.atMost(choices.length, MAX_OPTIONS, `${at}.choices`);
        options = choices.map((c, j) => {
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
      return { name, options, type };
    },
  );
  const exposed = shape.optionalBoolean(o.exposed, "exposed") ?? false;
  const top = shape.optionalCount(o.top, "top");
  return { text, asks, exposed, model, top };
}

/**
 * Writes the `/v1/decisions` reply: `object`, `model`, `answers` (in
 * question order), `usage` (all zero), `service`. `audits[i]`, when given,
 * is the audit id of answer `i` (in its `service`).
 */
export function writeDecisionsReply(
  w: JsonWriter,
  served: ServiceTable,
  request: ModelRequest,
  answers: readonly Assessment[],
  latencyUs: number,
  audits?: readonly (string | undefined)[],
  tiers?: readonly AnsweringTier[],
): void {
  w.ascii('{"object":"decision","model":').string(request.model);
  w.ascii(',"answers":[');
  const { asks } = request;
  for (let i = 0; i < answers.length; i++) {
    if (i > 0) w.ascii(",");
    writeModelAnswer(
      w,
      served,
      "decisions",
      asks[i]!.type,
      answers[i]!,
      audits?.[i],
      request.top,
      tiers?.[i],
    );
  }
  w.ascii(
    '],"usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0},"service":{"latency_us":',
  ).number(latencyUs).ascii(',"source":"table"}}');
}

/** How `/v1/decisions` reads its body and writes its reply. */
export const DECISIONS_SHAPE: DecisionShape<ModelRequest> = {
  needed: DECISIONS_BODY.needed,
  parse: parseDecisions,
  write: writeDecisionsReply,
};
