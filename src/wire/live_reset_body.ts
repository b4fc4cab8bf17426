/**
 * The body of `POST /v1/live/reset`: the question whose live evidence to
 * start afresh, or none for every question; described once and checked
 * here (the route is `src/http/live_routes/reset.ts`).
 *
 * @module
 */

import { closestName, type Table } from "../engine/mod.ts";
import { Type } from "@sinclair/typebox";
import { BodySpec, ObjectSpec } from "./body_spec.ts";

/** The fields of a `/v1/live/reset` body. */
export const LIVE_RESET_OBJECT = new ObjectSpec({
  question: {
    schema: Type.Optional(Type.String({
      description:
        "The question whose live evidence to reset; absent: every question.",
    })),
    words: "string",
    aka: ["name"],
  },
}, true);

/** The body of `/v1/live/reset`: what it needs (for error messages), its schema, its examples. */
export const LIVE_RESET_BODY = new BodySpec(
  `a JSON object ${LIVE_RESET_OBJECT.words} (no question: every question)`,
  LIVE_RESET_OBJECT.schema,
  {
    one: {
      summary: "One question",
      value: { question: "topic" },
    },
    all: { summary: "Every question", value: {} },
  },
);

/**
 * The question a `/v1/live/reset` body names (null: every question);
 * throws a 400 naming what is wrong (an unknown field or question).
 */
export function parseLiveReset(body: unknown, table: Table): string | null {
  const o = LIVE_RESET_BODY.object(body);
  LIVE_RESET_OBJECT.check(LIVE_RESET_BODY, o);
  const question = LIVE_RESET_BODY.optionalString(o.question, "question");
  if (question === undefined) return null;
  if (!table.byName.has(question)) {
    const known = table.questions.map((q) => q.name);
    const meant = closestName(question, known);
    throw LIVE_RESET_BODY.fail(
      `Unknown question ${JSON.stringify(question)}${
        meant === null ? "" : ` (did you mean ${JSON.stringify(meant)}?)`
      }; the bundle has ${known.map((n) => JSON.stringify(n)).join(", ")}`,
    );
  }
  return question;
}
