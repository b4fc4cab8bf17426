/**
 * `POST /v1/live/reset`: starts a question's live evidence afresh (or every
 * question's): its counts, its threshold in force (the bundle's again) and
 * its feedback alarms. On a fleet (`serve --live-store`) the store bumps
 * the question's reset generation and every replica starts afresh; the
 * reply comes once this replica has. A restart keeps the evidence; a reset
 * or a new bundle does not.
 *
 * @module
 */

import { HTTPException } from "hono/http-exception";
import { closestName, type Table } from "../../engine/mod.ts";
import type { LiveController } from "../../live/mod.ts";
import { Type } from "@sinclair/typebox";
import { BodySpec, ObjectSpec } from "../body_spec.ts";
import type { LiveResetReply } from "../openapi/live_schemas.ts";

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

/** Resets what `body` names on `live` for the served `table`; a 400 when the live certificate is off, a 503 when the fleet's store cannot be reached. */
export async function answerLiveReset(
  live: LiveController,
  table: Table,
  body: unknown,
): Promise<LiveResetReply> {
  const question = parseLiveReset(body, table);
  if (!live.enabled) {
    throw LIVE_RESET_BODY.fail(
      "The live certificate is off (serve --audit-rate 0): there is no live evidence to reset",
    );
  }
  let names: string[];
  try {
    names = await live.reset(table, question);
  } catch (e) {
    throw new HTTPException(503, {
      message: `Cannot reach the live store (${
        (e as Error)?.message ?? String(e)
      }); nothing was reset, send it again`,
    });
  }
  return {
    reset: names,
    fleet: live.fleet !== null,
    resets: live.resets.total,
  };
}
