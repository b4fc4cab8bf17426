/**
 * The decisions-API shape, `POST /v1/decisions`: `input` and an array of
 * typed `questions`; `answers` in question order, `usage` all zero.
 *
 * @module
 */

import type { Assessment } from "../engine/verdict.ts";
import {
  type Ask,
  type DecisionRequest,
  MAX_OPTIONS,
  MAX_QUESTIONS,
} from "./decision_request.ts";
import { BodyShape, describe, isObject } from "./fields.ts";
import type { JsonWriter } from "./json_writer.ts";
import {
  writeChoice,
  writeHint,
  writeProbabilities,
  writeQuestionName,
  writeService,
} from "./reply_parts.ts";
import type { ServedTable } from "./served.ts";

/** The body `/v1/decisions` needs, for error messages. */
export const DECISIONS_BODY = new BodyShape(
  'a JSON object {"model"?: string, "input": string, "questions": [{"type": "choice" | "predicate" | "noul", "name": string, "instructions"?: string, "choices"?: [{"value": string}, ...]}, ...]}',
);

/** Checks a `/v1/decisions` body; throws a 400 naming what is wrong. */
export function parseDecisions(body: unknown): DecisionRequest {
  const shape = DECISIONS_BODY;
  const o = shape.object(body);
  const model = shape.optionalString(o.model, "model") ?? "table";
  if (o.input === undefined) throw shape.fail('"input" is missing');
  const text = shape.string(o.input, "input");
  if (o.questions === undefined) throw shape.fail('"questions" is missing');
  const list = shape.array(o.questions, "questions");
  shape.atMost(list.length, MAX_QUESTIONS, "questions");
  const asks = list.map(
    (item, i): Ask => {
      const at = `questions[${i}]`;
      const q = shape.objectField(item, at);
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
  return { text, asks, exposed, model };
}

/**
 * Writes one element of the reply's `answers` array: `type`, `name`, then
 * `choice`, `confidence`, `probabilities` (choice), `confidence`,
 * `probability`, `noul`, `answer` (noul), `confidence`, `probability`
 * (predicate) or only `confidence` (unsupported, with a `hint` for a name
 * the table does not know), and `service` (with `audit` when given).
 */
export function writeDecisionsAnswer(
  w: JsonWriter,
  served: ServedTable,
  type: string,
  a: Assessment,
  audit?: string,
): void {
  const { answer } = a;
  w.ascii('{"type":').string(type).ascii(',"name":');
  writeQuestionName(w, served, a);
  if (answer.kind === "choice") {
    w.ascii(',"choice":');
    writeChoice(w, served, a);
    w.ascii(',"confidence":').number(answer.confidence);
    w.ascii(',"probabilities":');
    writeProbabilities(w, served, a, true);
  } else if (answer.kind === "yes_no") {
    const p = answer.probability!;
    w.ascii(',"confidence":').number(answer.confidence);
    w.ascii(',"probability":').number(p);
    if (type === "noul") {
      w.ascii(',"noul":').number(p).ascii(',"answer":').boolean(
        answer.answer!,
      );
    }
  } else {
    w.ascii(',"confidence":').number(answer.confidence);
    writeHint(w, served, a);
  }
  w.ascii(',"service":');
  writeService(w, a, audit);
  w.ascii("}");
}

/**
 * Writes the `/v1/decisions` reply: `object`, `model`, `answers` (in
 * question order), `usage` (all zero), `service`. `audits[i]`, when given,
 * is the audit id of answer `i` (in its `service`).
 */
export function writeDecisionsReply(
  w: JsonWriter,
  served: ServedTable,
  request: DecisionRequest,
  answers: readonly Assessment[],
  latencyUs: number,
  audits?: readonly (string | undefined)[],
): void {
  w.ascii('{"object":"decision","model":').string(request.model ?? "table");
  w.ascii(',"answers":[');
  const asks = request.asks!;
  for (let i = 0; i < answers.length; i++) {
    if (i > 0) w.ascii(",");
    writeDecisionsAnswer(w, served, asks[i]!.type!, answers[i]!, audits?.[i]);
  }
  w.ascii(
    '],"usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0},"service":{"latency_us":',
  ).number(latencyUs).ascii(',"source":"table"}}');
}
