/**
 * The alternate decision-model shape, `POST /v1/altdecisions`: a `state`
 * and `questions` keyed by name with `criteria` objects; `answers` keyed by
 * name, `latency_ms`.
 *
 * @module
 */

import type { AnsweringTier } from "../engine/two_tier.ts";
import type { Assessment } from "../engine/verdict.ts";
import {
  type DecisionShape,
  MAX_OPTIONS,
  MAX_QUESTIONS,
  type ModelRequest,
  type TypedAsk,
} from "./decision_request.ts";
import { BodyShape } from "./fields.ts";
import { ALT_QUESTION_FIELDS, SYNONYMS, unknownField } from "./known_fields.ts";
import type { JsonWriter } from "./json_writer.ts";
import { writeQuestionKey } from "./reply_parts.ts";
import type { ServedTable } from "./served.ts";
import { writeModelAnswer } from "./model_answer.ts";

/** The body `/v1/altdecisions` needs, for error messages. */
export const ALT_BODY = new BodyShape(
  'a JSON object {"model"?: string, "state": string, "questions": {"<name>": {"type": "choice" | "predicate" | "noul", "instructions"?: string, "criteria"?: {"<option>": "<description>", ...}}, ...}}',
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
    for (const key in q) {
      switch (key) {
        case "type":
        case "instructions":
        case "criteria":
          continue;
      }
      throw unknownField(
        shape,
        at,
        key,
        ALT_QUESTION_FIELDS,
        SYNONYMS.altQuestion,
      );
    }
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
  served: ServedTable,
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
