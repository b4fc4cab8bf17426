/**
 * Counting feedback in a fleet's live certificate (`serve --live-store`):
 * the same as `countFeedback` (`feedback.ts`) for items without an id,
 * while each audit id and each uncertified answer's decision id is checked
 * here (signature, text, bundle, evidence pool, question, lifetime; an id
 * that does not verify is checked again after the key file is read again)
 * and counted by the store, once per fleet, whichever replicas it is sent
 * to. The reply waits for the store, so an item it reports counted is in
 * the fleet's evidence (or, while the store is unreachable, waiting here
 * to be sent).
 *
 * @module
 */

import type { DriftGuard, Table } from "../engine/mod.ts";
import type {
  CheckedAudit,
  CheckedDecision,
  LiveController,
} from "./controller.ts";
import {
  countTraceItem,
  type FeedbackItem,
  type FeedbackTally,
  type MissedAudit,
} from "./feedback.ts";
import type { StagedAudit } from "./fleet.ts";

/**
 * How much longer than its own lifetime an audit's name is remembered by the
 * store: the clocks of the replicas may be this far apart.
 */
export const CLOCK_SKEW_MS = 60_000;

/**
 * Counts feedback `items` in the fleet's live certificate of `live` (which
 * must have a fleet), against the served `table` read through `guard`.
 */
export async function countFleetFeedback(
  live: LiveController,
  table: Table,
  guard: DriftGuard,
  items: readonly FeedbackItem[],
): Promise<FeedbackTally> {
  const fleet = live.fleet!;
  const misses: (MissedAudit | null)[] = items.map(() => null);
  const staged: { at: number; audit: StagedAudit; feedback: boolean }[] = [];
  /** Stages item `at`'s label on the checked id `c`, for the store to count once. */
  const stage = (
    at: number,
    c: CheckedAudit | CheckedDecision & { tableAnswer: string | boolean },
    kind: "audit" | "feedback",
  ) =>
    staged.push({
      at,
      feedback: kind === "feedback",
      audit: fleet.stage(
        c.slot,
        c.confidence,
        c.tableAnswer !== items[at]!.answer,
        c.tag,
        live.auditRemainingMs(c.issuedAt) + CLOCK_SKEW_MS,
        c.semantic,
        kind,
      ),
    });
  let feedback = 0;
  let tracesOnly = 0;
  let reread = false;
  for (let at = 0; at < items.length; at++) {
    const item = items[at]!;
    if (item.audit === undefined) {
      if (countTraceItem(live, table, guard, item) === null) tracesOnly++;
      else feedback++;
      continue;
    }
    // An uncertified answer's decision id: checked here, counted by the
    // store under its tag, once across the fleet.
    if (live.isDecisionId(item.audit)) {
      const claimed = live.claimDecision(
        item.audit,
        item.question,
        item.text,
        table,
      );
      if (typeof claimed === "string") {
        misses[at] = { audit: item.audit, reason: claimed };
      } else if (
        claimed === null ||
        claimed.semantic && !fleet.hasSemantic(claimed.slot)
      ) tracesOnly++;
      else {
        stage(at, claimed, "feedback");
      }
      continue;
    }
    let checked = live.checkAudit(item.audit, item.question, table, item.text);
    // Another replica may have read a new key first.
    if (checked === "forged" && !reread) {
      reread = true;
      if (await live.rereadKeys()) {
        checked = live.checkAudit(item.audit, item.question, table, item.text);
      }
    }
    // Given before a reset of its question: not the new evidence's.
    if (
      typeof checked !== "string" &&
      checked.issuedAt < live.resetAt(table, item.question)
    ) checked = "not_shared";
    // A second-tier answer counted in a second tier this replica does not
    // pool (it serves the bundle without it).
    if (
      typeof checked !== "string" && checked.semantic &&
      !fleet.hasSemantic(checked.slot)
    ) checked = "not_shared";
    if (typeof checked === "string") {
      misses[at] = { audit: item.audit, reason: checked };
      continue;
    }
    stage(at, checked, "audit");
  }
  const outcomes = await fleet.submit(staged.map((s) => s.audit));
  let audits = 0;
  staged.forEach((s, i) => {
    const outcome = outcomes[i] ?? "counted";
    if (outcome === "counted") {
      if (s.feedback) feedback++;
      else audits++;
    } else misses[s.at] = { audit: items[s.at]!.audit!, reason: outcome };
  });
  // Feedback on uncertified answers goes with the next sync.
  if (feedback > 0 && staged.length === 0) fleet.kick();
  const missedAudits = misses.filter((m): m is MissedAudit => m !== null);
  return {
    received: items.length,
    audits,
    feedback,
    tracesOnly: tracesOnly + missedAudits.length,
    missedAudits,
  };
}
