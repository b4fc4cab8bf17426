/**
 * `POST /v1/feedback`: what the caller's reference model answered, one
 * item or an array of them. An item with an audit id the service gave is
 * an audit: the table's answer and confidence are the ones kept under the
 * id, never recomputed. An item without one is an ordinary trace: the
 * table's assessment is recomputed (without feeding the drift guard) and,
 * when the answer is eligible but not certified, counted as feedback on an
 * uncertified answer; a certified one is a trace only. Unknown, expired or
 * already answered ids are reported and never counted.
 *
 * The whole body is checked before anything happens (a bad item is a 400
 * and nothing of the request is counted or logged); then the items are
 * written to the feedback log (a failure is a 503, nothing counted); then
 * counted, and the live decision of every question touched is applied.
 *
 * @module
 */

import { HTTPException } from "hono/http-exception";
import { assess, prepareText } from "../../engine/answer.ts";
import type { QuestionTable, Table } from "../../engine/table.ts";
import { answerOf } from "../../engine/verdict.ts";
import type { ServedTable } from "../served.ts";
import { BodyShape, describe, isObject, setKey } from "../fields.ts";
import type { AuditMiss } from "./audits.ts";
import { isEligible, type LiveController } from "./controller.ts";

/** Most items one feedback request may carry (more gets 400). */
export const MAX_FEEDBACK_ITEMS = 1000;

/** The body `/v1/feedback` needs, for error messages. */
export const FEEDBACK_BODY = new BodyShape(
  'a JSON object {"question": string, "state": string or object, "answer": "<option>" or true or false, "audit"?: string}, or an array of at most ' +
    `${MAX_FEEDBACK_ITEMS} of them`,
);

/** One checked feedback item. */
export interface FeedbackItem {
  question: string;
  /** The text the table reads (the state, serialised when an object). */
  text: string;
  /** What the reference model answered. */
  answer: string | boolean;
  /** The audit id the service gave, when this answers an audit. */
  audit: string | undefined;
}

/** An audit id that could not be used, and why. */
export interface MissedAudit {
  audit: string;
  /** `unknown` (never given), `expired` (dropped unanswered, or answered long ago), `answered` (answered already), `other_question` (given for another question). */
  reason: AuditMiss;
}

/** The reply of `/v1/feedback`. */
export interface FeedbackReply {
  /** Items received. */
  received: number;
  /** Items counted as audits. */
  audits: number;
  /** Items counted as feedback on an uncertified answer. */
  feedback: number;
  /** Items kept as traces only (certified, not eligible, a missed id, or the live certificate off). */
  traces_only: number;
  /** Audit ids that could not be used. */
  missed_audits: MissedAudit[];
}

/** Checks a `/v1/feedback` body against `table`; throws a 400 naming what is wrong. */
export function parseFeedback(body: unknown, table: Table): FeedbackItem[] {
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

/** The feedback items as trace lines (`{"text", "answers", "time"}`, newline-terminated) that `train --traces` reads. */
export function traceLines(items: readonly FeedbackItem[], time: Date): string {
  const iso = time.toISOString();
  let out = "";
  for (const item of items) {
    const answers: Record<string, string | boolean> = {};
    setKey(answers, item.question, item.answer);
    out += JSON.stringify({ text: item.text, answers, time: iso }) + "\n";
  }
  return out;
}

/**
 * Counts checked feedback `items` in the live certificates of `served`
 * (audits in the certificates of the table that gave them) and applies the
 * live decision of every question touched. See the module doc.
 */
export function countFeedback(
  live: LiveController,
  served: ServedTable,
  items: readonly FeedbackItem[],
): FeedbackReply {
  const reply: FeedbackReply = {
    received: items.length,
    audits: 0,
    feedback: 0,
    traces_only: 0,
    missed_audits: [],
  };
  const touched = new Map<Table, Set<string>>();
  const touch = (table: Table, name: string) => {
    let names = touched.get(table);
    if (names === undefined) touched.set(table, names = new Set());
    names.add(name);
  };
  const { table, peek } = served;
  for (const item of items) {
    if (item.audit !== undefined) {
      const found = live.pending.take(item.audit, item.question);
      if (typeof found === "string") {
        reply.missed_audits.push({ audit: item.audit, reason: found });
        reply.traces_only++;
        continue;
      }
      found.certificate.recordAudit(
        found.confidence,
        found.answer !== item.answer,
      );
      touch(found.table, found.question);
      reply.audits++;
      continue;
    }
    if (!live.enabled) {
      reply.traces_only++;
      continue;
    }
    // An answer served uncertified moments ago is counted as it was served,
    // without answering again; others are answered again now.
    const recent = live.takeRecent(item.question, item.text);
    if (recent !== undefined) {
      recent.certificate.recordFeedback(
        recent.confidence,
        recent.answer !== item.answer,
      );
      touch(recent.table, item.question);
      reply.feedback++;
      continue;
    }
    const a = assess(
      table,
      prepareText(table, item.text),
      item.question,
      {},
      peek,
    );
    if (!isEligible(a) || a.answer.certified) {
      reply.traces_only++;
      continue;
    }
    const given = answerOf(a.answer);
    live.certificates(table)[a.slot]!.recordFeedback(
      a.fullConfidence,
      given !== item.answer,
    );
    touch(table, item.question);
    reply.feedback++;
  }
  for (const [t, names] of touched) {
    for (const name of names) live.apply(t, name);
  }
  return reply;
}

/** The 503 when the feedback log cannot be written (nothing was counted). */
export function logFailure(error: unknown): HTTPException {
  return new HTTPException(503, {
    message: `Cannot write the feedback log (${
      (error as Error)?.message ?? String(error)
    }); nothing of this request was counted, send it again`,
  });
}
