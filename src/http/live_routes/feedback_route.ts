/**
 * What `POST /v1/feedback` does with a parsed body: checks it
 * (`feedback_body.ts`), sets apart the items that are no label (an id no
 * key signed, or given for another text or question: counted, written to
 * the log's capped side file, reported in `missed_audits`), writes the
 * items kept to the feedback log in one write (replayed audits left out,
 * `src/live/feedback_log_items.ts`), each line saying where it came from
 * and the bundle it answered, then counts them in the live certificate
 * (one process's or the fleet's) and makes the reply. A failed log write
 * is a 503 and nothing is counted.
 *
 * @module
 */

import {
  bundleIdOf,
  countFeedback,
  countFleetFeedback,
  type FeedbackOrigin,
  feedbackOrigin,
  type FeedbackTally,
  feedbackTrace,
  idlessFeedback,
  loggableItems,
  screenFeedback,
} from "../../live/mod.ts";
import { HTTPException } from "hono/http-exception";
import { traceLine } from "../../traces/mod.ts";
import type { Service } from "../service.ts";
import { parseFeedback, type RefusedItem } from "../../wire/mod.ts";
import type { FeedbackReply } from "../../openapi/mod.ts";

/** Answers a parsed `/v1/feedback` `body` for `service`; throws a 400 or 503 (see the module doc). */
export async function answerFeedback(
  service: Service,
  body: unknown,
): Promise<FeedbackReply> {
  const served = service.served;
  const learning = service.learning;
  const parsed = parseFeedback(
    body,
    served.table,
    service.acceptNewOptions,
    learning?.registry,
  );
  const refused = parsed.refused;
  if (refused.length > 0) service.stats.recordRefusedFeedback(refused.length);
  const live = service.live;
  const { kept: items, screened } = await screenFeedback(live, parsed.items);
  for (const s of screened) service.stats.recordNotLabel(s.reason);
  if (screened.length > 0 && service.refusedLog !== null) {
    await service.refusedLog(
      screened.map(({ item, reason }) => ({
        question: item.question,
        text: item.text,
        answer: item.answer,
        id: item.audit!,
        reason,
      })),
      new Date(),
    );
  }
  const logged = service.feedbackLog === null ? [] : loggableItems(live, items);
  if (service.feedbackLog !== null && logged.length > 0) {
    const time = new Date();
    const bundle = bundleIdOf(served.table);
    let lines = "";
    // An option the table lacks is evidence of a change only on a decision
    // the service made (an id it signed for this text), never on an item
    // a client made up: see `Learner.observe`.
    const origins: FeedbackOrigin[] = [];
    for (const item of logged) {
      const origin = feedbackOrigin(
        live,
        served.answerer,
        served.peek,
        item,
        bundle,
      );
      origins.push(origin);
      lines += traceLine(feedbackTrace(item, time, origin));
    }
    try {
      await service.feedbackLog(lines);
    } catch (e) {
      service.log(`Feedback log: ${(e as Error)?.message ?? String(e)}`);
      throw logFailure(e);
    }
    logged.forEach((item, i) => {
      const origin = origins[i]!;
      idlessFeedback(live, served.table, item, origin, learning !== null);
      learning?.observe(
        item.question,
        item.answer,
        served.table,
        origin.id !== undefined || origin.audit !== undefined,
      );
    });
  }
  const tally = live.fleet === null
    ? countFeedback(live, served.table, served.peek, items)
    : await countFleetFeedback(live, served.table, served.peek, items);
  tally.received += screened.length;
  tally.missedAudits.push(
    ...screened.map((s) => ({ audit: s.item.audit!, reason: s.reason })),
  );
  return {
    ...feedbackReply(tally, refused),
    kept: logged.length,
    not_labels: screened.length,
  };
}

/** The reply of `/v1/feedback` for a `tally` of the items kept and the items `refused` (nothing logged: `kept` 0). */
export function feedbackReply(
  tally: FeedbackTally,
  refused: readonly RefusedItem[] = [],
): FeedbackReply {
  return {
    kept: 0,
    not_labels: 0,
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
