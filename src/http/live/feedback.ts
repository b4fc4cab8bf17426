/**
 * `POST /v1/feedback`: what the caller's reference model answered, one
 * item or an array of them. This module checks the body and writes the
 * reply; counting lives in `src/live/feedback.ts`.
 *
 * The whole body is checked before anything happens (a bad item is a 400
 * and nothing of the request is counted or logged). An item whose answer
 * is an option the bundle does not have (a typo such as `frauds`) is
 * refused: listed in the reply's `refused` with the bundle's options and
 * neither logged nor counted, unless the service accepts new options
 * (`serve --accept-new-options`). The other items are written to the
 * feedback log, each line saying where it came from and the bundle it
 * answered (a failure is a 503, nothing counted); then counted, and the
 * live decision of every question touched is applied.
 *
 * @module
 */

import { HTTPException } from "hono/http-exception";
import type { QuestionTable, Table } from "../../engine/table.ts";
import type { FeedbackItem, FeedbackTally } from "../../live/feedback.ts";
import type { FeedbackReply } from "../openapi/live_schemas.ts";
import { BodyShape, describe, isObject } from "../fields.ts";
import { FEEDBACK_FIELDS, SYNONYMS, unknownField } from "../known_fields.ts";
import { closestName } from "../../engine/suggest.ts";

/** Most items one feedback request may carry (more gets 400). */
export const MAX_FEEDBACK_ITEMS = 1000;

/** The body `/v1/feedback` needs, for error messages. */
export const FEEDBACK_BODY = new BodyShape(
  'a JSON object {"question": string, "state": string or object, "answer": "<option>" or true or false, "audit"?: string}, or an array of at most ' +
    `${MAX_FEEDBACK_ITEMS} of them`,
);

export type { FeedbackReply };

/** An item refused because its answer is an option the bundle lacks. */
export interface RefusedItem {
  /** Its position in the body (0 for a single item). */
  index: number;
  question: string;
  answer: string;
  reason: "unknown_option";
  /** The question's options in the bundle. */
  known: string[];
  /** The known option it most likely meant, when one is close. */
  did_you_mean?: string;
}

/** A checked feedback body: the items to log and count, and those refused. */
export interface ParsedFeedback {
  items: FeedbackItem[];
  refused: RefusedItem[];
}

/**
 * Checks a `/v1/feedback` body against `table`; throws a 400 naming what
 * is wrong. An answer naming an option `table` lacks is refused (see the
 * module doc) unless `acceptNewOptions`.
 */
export function parseFeedback(
  body: unknown,
  table: Table,
  acceptNewOptions = false,
): ParsedFeedback {
  const items = parseItems(body, table);
  if (acceptNewOptions) return { items, refused: [] };
  const kept: FeedbackItem[] = [];
  const refused: RefusedItem[] = [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    const q = table.byName.get(item.question)!;
    if (
      q.kind !== "choice" || typeof item.answer !== "string" ||
      q.optionIndex.has(item.answer)
    ) {
      kept.push(item);
      continue;
    }
    const meant = closestName(item.answer, q.options);
    refused.push({
      index: i,
      question: item.question,
      answer: item.answer,
      reason: "unknown_option",
      known: [...q.options],
      ...(meant === null ? {} : { did_you_mean: meant }),
    });
  }
  return { items: kept, refused };
}

function parseItems(body: unknown, table: Table): FeedbackItem[] {
  const shape = FEEDBACK_BODY;
  if (Array.isArray(body)) {
    if (body.length > MAX_FEEDBACK_ITEMS) {
      throw shape.fail(
        `The array holds ${body.length} items; one request may carry at most ${MAX_FEEDBACK_ITEMS} (send the rest in further requests)`,
      );
    }
    if (body.length === 0) throw shape.fail("The array is empty");
    return body.map((item, i) => parseItem(item, table, `[${i}].`));
  }
  if (!isObject(body)) {
    throw shape.fail(
      `The body must be a JSON object or an array, got ${describe(body)}`,
    );
  }
  return [parseItem(body, table, "")];
}

function parseItem(item: unknown, table: Table, at: string): FeedbackItem {
  const shape = FEEDBACK_BODY;
  if (!isObject(item)) {
    throw shape.fail(
      `${
        at === "" ? "The body" : `"${at.slice(0, -1)}"`
      } must be an object, got ${describe(item)}`,
    );
  }
  for (const key in item) {
    switch (key) {
      case "question":
      case "state":
      case "answer":
      case "audit":
        continue;
    }
    throw unknownField(
      shape,
      at === "" ? "" : at.slice(0, -1),
      key,
      FEEDBACK_FIELDS,
      SYNONYMS.feedback,
    );
  }
  if (item.question === undefined) {
    throw shape.fail(`"${at}question" is missing`);
  }
  const question = shape.string(item.question, `${at}question`);
  const q = table.byName.get(question);
  if (q === undefined) {
    throw shape.fail(
      `"${at}question" names ${
        JSON.stringify(question)
      }, which the table does not know; its questions are: ${
        table.questions.map((x) => x.name).join(", ")
      }`,
    );
  }
  const text = shape.state(item.state, `${at}state`);
  if (item.answer === undefined) throw shape.fail(`"${at}answer" is missing`);
  const answer = checkAnswer(item.answer, q, `${at}answer`);
  const audit = shape.optionalString(item.audit, `${at}audit`);
  return { question, text, answer, audit };
}

function checkAnswer(
  value: unknown,
  q: QuestionTable,
  field: string,
): string | boolean {
  if (q.kind === "yes_no") {
    if (typeof value !== "boolean") {
      throw FEEDBACK_BODY.fail(
        `"${field}" must be true or false for the yes/no question ${
          JSON.stringify(q.name)
        }, got ${describe(value)}`,
      );
    }
    return value;
  }
  if (typeof value !== "string") {
    throw FEEDBACK_BODY.fail(
      `"${field}" must be an option (a string) for the choice question ${
        JSON.stringify(q.name)
      }, got ${describe(value)}`,
    );
  }
  return value;
}

/** The reply of `/v1/feedback` for a `tally` of the items kept and the items `refused`. */
export function feedbackReply(
  tally: FeedbackTally,
  refused: readonly RefusedItem[] = [],
): FeedbackReply {
  return {
    received: tally.received + refused.length,
    audits: tally.audits,
    feedback: tally.feedback,
    traces_only: tally.tracesOnly,
    missed_audits: tally.missedAudits,
    refused: [...refused],
  };
}

/** The 503 when the feedback log cannot be written (nothing was counted). */
export function logFailure(error: unknown): HTTPException {
  return new HTTPException(503, {
    message: `Cannot write the feedback log (${
      (error as Error)?.message ?? String(error)
    }); nothing of this request was counted, send it again`,
  });
}
