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
import type { Table } from "../../engine/mod.ts";
import type { LiveController } from "../../live/mod.ts";
import type { LiveResetReply } from "../../openapi/mod.ts";
import { LIVE_RESET_BODY, parseLiveReset } from "../../wire/mod.ts";

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
