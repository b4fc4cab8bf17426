/**
 * The body of `POST /v1/feedback`: what the caller's reference model
 * answered, one item or an array of them, described once and checked here
 * (the route, `src/http/live_routes/feedback_route.ts`, logs and counts
 * the items and writes the reply; counting lives in `src/live/feedback.ts`).
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

import { closestName, type QuestionTable, type Table } from "../engine/mod.ts";
import type { FeedbackItem } from "../live/mod.ts";
import { Type } from "@sinclair/typebox";
import { BodySpec, ObjectSpec, PARCEL } from "./body_spec.ts";
import { describe, isObject } from "./fields.ts";
import { ref } from "./schema_parts.ts";

/** Most items one feedback request may carry (more gets 400). */
export const MAX_FEEDBACK_ITEMS = 1000;

/** One item of `/v1/feedback`. */
export const FEEDBACK_ITEM = new ObjectSpec({
  question: {
    schema: Type.String({ description: "A question of the bundle." }),
    words: "string",
  },
  state: {
    schema: Type.Unsafe<string | Record<string, unknown>>({
      type: ["string", "object"],
      description:
        "The text the answer was about; an object is serialised with JSON.stringify first.",
    }),
    words: "string or object",
    aka: ["input", "text"],
  },
  answer: {
    schema: Type.Unsafe<string | boolean>({
      type: ["string", "boolean"],
      description:
        "What the reference model answered: an option (choice question) or true / false (yes/no question).",
    }),
    words: '"<option>" or true or false',
    aka: ["choice", "label"],
  },
  audit: {
    schema: Type.Optional(Type.String({
      description:
        "The audit id the service gave with the answer, when this answers an audit.",
    })),
    words: "string",
    aka: ["audit_id"],
  },
  feedback_id: {
    schema: Type.Optional(Type.String({
      description:
        "The feedback_id the service gave with an uncertified answer: the answer then counts once, however often it is sent. The audit field takes it too.",
    })),
    words: "string",
    aka: ["decision_id", "id"],
  },
}, true);

/** The body of `/v1/feedback` (one item or an array of them): what it needs (for error messages), its schema, its examples. */
export const FEEDBACK_BODY = new BodySpec(
  `a JSON object ${FEEDBACK_ITEM.words}, or an array of at most ${MAX_FEEDBACK_ITEMS} of them`,
  Type.Union([
    ref("FeedbackItem", FEEDBACK_ITEM.schema),
    Type.Array(ref("FeedbackItem", FEEDBACK_ITEM.schema), {
      minItems: 1,
      maxItems: MAX_FEEDBACK_ITEMS,
    }),
  ]),
  {
    trace: {
      summary: "What the model said about a text (no audit id)",
      value: { question: "topic", state: PARCEL, answer: "delivery" },
    },
    batch: {
      summary: "Several at once, one answering an audit",
      value: [
        { question: "topic", state: PARCEL, answer: "delivery" },
        {
          question: "wants_human",
          state: PARCEL,
          answer: false,
          audit: "5f0c2a91-1k",
        },
      ],
    },
  },
);

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
  learning?: { kindOf(question: string): "choice" | "yes_no" | undefined },
): ParsedFeedback {
  const items = parseItems(body, table, learning);
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

/** What a learning service knows of a question its table lacks: its kind, when feedback showed it. */
type Learning = { kindOf(question: string): "choice" | "yes_no" | undefined };

function parseItems(
  body: unknown,
  table: Table,
  learning?: Learning,
): FeedbackItem[] {
  const shape = FEEDBACK_BODY;
  if (Array.isArray(body)) {
    if (body.length > MAX_FEEDBACK_ITEMS) {
      throw shape.fail(
        `The array holds ${body.length} items; one request may carry at most ${MAX_FEEDBACK_ITEMS} (send the rest in further requests)`,
      );
    }
    if (body.length === 0) throw shape.fail("The array is empty");
    return body.map((item, i) => parseItem(item, table, `[${i}].`, learning));
  }
  if (!isObject(body)) {
    throw shape.fail(
      `The body must be a JSON object or an array, got ${describe(body)}`,
    );
  }
  return [parseItem(body, table, "", learning)];
}

function parseItem(
  item: unknown,
  table: Table,
  at: string,
  learning?: Learning,
): FeedbackItem {
  const shape = FEEDBACK_BODY;
  if (!isObject(item)) {
    throw shape.fail(
      `${
        at === "" ? "The body" : `"${at.slice(0, -1)}"`
      } must be an object, got ${describe(item)}`,
    );
  }
  const bad = FEEDBACK_ITEM.unknownKey(item);
  if (bad !== null) {
    throw FEEDBACK_ITEM.unknown(shape, at === "" ? "" : at.slice(0, -1), bad);
  }
  if (item.question === undefined) {
    throw shape.fail(`"${at}question" is missing`);
  }
  const question = shape.string(item.question, `${at}question`);
  const q = table.byName.get(question);
  if (q === undefined && learning !== undefined) {
    // A learning service learns a question its table lacks from feedback.
    const text = shape.state(item.state, `${at}state`);
    if (item.answer === undefined) throw shape.fail(`"${at}answer" is missing`);
    const kind = learning.kindOf(question);
    const answer = kind === undefined
      ? anyAnswer(item.answer, `${at}answer`)
      : checkAnswer(item.answer, { name: question, kind }, `${at}answer`);
    return { question, text, answer, audit: itemId(item, at) };
  }
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
  return { question, text, answer, audit: itemId(item, at) };
}

/** The id an item carries (`audit` or `feedback_id`); a 400 when it carries both. */
function itemId(item: Record<string, unknown>, at: string): string | undefined {
  const shape = FEEDBACK_BODY;
  const audit = shape.optionalString(item.audit, `${at}audit`);
  const feedbackId = shape.optionalString(
    item.feedback_id,
    `${at}feedback_id`,
  );
  if (audit !== undefined && feedbackId !== undefined) {
    throw shape.fail(
      `"${at}audit" and "${at}feedback_id" are both given; an answer carries one id: send the one it carried`,
    );
  }
  return audit ?? feedbackId;
}

/** An answer to a question nothing has shown yet: true, false or a non-empty option. */
function anyAnswer(value: unknown, field: string): string | boolean {
  if (typeof value === "boolean") return value;
  if (typeof value === "string" && value !== "") return value;
  throw FEEDBACK_BODY.fail(
    `"${field}" must be an option (a non-empty string) or true or false, got ${
      describe(value)
    }`,
  );
}

function checkAnswer(
  value: unknown,
  q: Pick<QuestionTable, "name" | "kind">,
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
