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
import { closestName } from "../../engine/suggest.ts";
import type { LiveController } from "../../live/controller.ts";
import type { Table } from "../../engine/table.ts";
import { BodyShape } from "../fields.ts";
import { unknownField } from "../known_fields.ts";
import type { LiveResetReply } from "../openapi/live_schemas.ts";

/** The body `/v1/live/reset` needs, for error messages. */
export const LIVE_RESET_BODY = new BodyShape(
  'a JSON object {"question"?: string} (no question: every question)',
);

/** The fields of a `/v1/live/reset` body. */
export const LIVE_RESET_FIELDS = ["question"] as const;

/**
 * The question a `/v1/live/reset` body names (null: every question);
 * throws a 400 naming what is wrong (an unknown field or question).
 */
export function parseLiveReset(body: unknown, table: Table): string | null {
  const o = LIVE_RESET_BODY.object(body);
  for (const key of Object.keys(o)) {
    if (!(LIVE_RESET_FIELDS as readonly string[]).includes(key)) {
      throw unknownField(LIVE_RESET_BODY, "", key, LIVE_RESET_FIELDS, {
        name: "question",
      });
    }
  }
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
