/**
 * Counting what a reference model answered in the live certificates. An
 * item with an audit id the service gave is an audit: the table's answer
 * and confidence are the ones kept under the id, never recomputed. An item
 * without one is an ordinary trace: an answer served uncertified lately is
 * counted as it was served; any other is answered again now (without
 * feeding the drift guard) and, when eligible but not certified, counted as
 * feedback on an uncertified answer; a certified one is a trace only.
 * Unknown, expired or already answered ids are reported and never counted.
 * Then the live decision of every question touched is applied.
 *
 * @module
 */

import { createHash } from "node:crypto";
import {
  answerOf,
  assess,
  type DriftGuard,
  prepareText,
  type Table,
  type TableState,
} from "../engine/mod.ts";
import type { TraceRecord } from "../traces/mod.ts";
import type { AuditMiss } from "./audits.ts";
import { isEligible, type LiveController } from "./controller.ts";

/** What the reference model answered about one text. */
export interface FeedbackItem {
  question: string;
  /** The text the table reads (the state, serialised when an object). */
  text: string;
  /** What the reference model answered: an option, or yes (true) / no (false). */
  answer: string | boolean;
  /** The audit id the service gave, when this answers an audit. */
  audit: string | undefined;
}

/** An audit id that could not be used, and why. */
export interface MissedAudit {
  audit: string;
  /** `unknown` (never given), `expired` (dropped unanswered, or answered long ago), `answered` (answered already), `other_question` (given for another question); `other_bundle` (given by another bundle, or by a table no longer served); with signed ids also `forged` (not signed by a key held), `not_shared` (its decision counted in evidence this replica does not share), `malformed` (signed, but its numbers unusable), `store_error` (the fleet's store refused the sync carrying it). */
  reason: AuditMiss;
}

/** How a batch of feedback items was counted. */
export interface FeedbackTally {
  /** Items received. */
  received: number;
  /** Items counted as audits. */
  audits: number;
  /** Items counted as feedback on an uncertified answer. */
  feedback: number;
  /** Items kept as traces only (certified, not eligible, a missed id, or the live certificate off). */
  tracesOnly: number;
  /** Audit ids that could not be used. */
  missedAudits: MissedAudit[];
}

/**
 * Where a feedback item comes from, as its line in the feedback log says:
 * `audit` (it answers an audit id; the service picked it among certified
 * answers with probability `samplingProbability`), `uncertified` (no id, and
 * the table serving now does not certify its answer) or `trace` (no id, an
 * answer certified or one no threshold could change: what the client chose
 * to send). None of them is a random sample of the traffic.
 */
export type FeedbackSource = "audit" | "uncertified" | "trace";

/** Where a feedback item comes from and the bundle it answered. */
export interface FeedbackOrigin {
  source: FeedbackSource;
  /** For an audit, the probability with which its answer was picked; else null. */
  samplingProbability: number | null;
  /** For an audit, its name in the log (`auditLogName`); else undefined. */
  audit?: string | undefined;
  /** The bundle id of the table serving when the item arrived. */
  bundle: string;
}

/**
 * The name of audit id `id` in a feedback log: the first 16 hex digits of
 * its SHA-256. The same id gets the same name on every replica, so `train`
 * keeps one line per audit across a fleet's logs (each replica logs an id
 * it has not counted itself, a replay sent to it included); the id itself,
 * which counts the audit, is not written.
 *
 * @example
 * ```ts
 * import { auditLogName } from "./feedback.ts";
 * import assert from "node:assert/strict";
 * assert.equal(auditLogName("abc"), "ba7816bf8f01cfea");
 * ```
 */
export function auditLogName(id: string): string {
  return createHash("sha256").update(id).digest("hex").slice(0, 16);
}

/**
 * The origin of `item` (see `FeedbackSource`): an item with an audit id is
 * an audit at `live`'s audit rate; another is `uncertified` when `table`
 * (served with `state`), read through `guard` (not fed), leaves its answer
 * uncertified and eligible, else `trace`. Nothing is counted or taken.
 */
export function feedbackOrigin(
  live: LiveController,
  table: Table,
  state: TableState,
  guard: DriftGuard,
  item: FeedbackItem,
  bundle: string,
): FeedbackOrigin {
  if (item.audit !== undefined) {
    return {
      source: "audit",
      samplingProbability: live.auditRate,
      audit: auditLogName(item.audit),
      bundle,
    };
  }
  const a = assess(
    table,
    state,
    prepareText(table, state, item.text),
    item.question,
    {},
    guard,
  );
  const source = isEligible(a) && !a.answer.certified ? "uncertified" : "trace";
  return { source, samplingProbability: null, bundle };
}

/** A feedback item as the trace it is, seen at `time`, with its `origin` when known. */
export function feedbackTrace(
  item: FeedbackItem,
  time: Date,
  origin?: FeedbackOrigin,
): TraceRecord {
  return {
    text: item.text,
    answers: [[item.question, item.answer]],
    time,
    ...(origin === undefined ? {} : { feedback: origin }),
  };
}

/**
 * Counts feedback `items` in the live certificates of `live`: audits in
 * those of the table that gave them, other items against `table` (read
 * through `guard`, which is not fed); then applies the live decision of
 * every question touched. See the module doc.
 */
export function countFeedback(
  live: LiveController,
  table: Table,
  guard: DriftGuard,
  items: readonly FeedbackItem[],
): FeedbackTally {
  const tally: FeedbackTally = {
    received: items.length,
    audits: 0,
    feedback: 0,
    tracesOnly: 0,
    missedAudits: [],
  };
  const touched = new Map<Table, Set<string>>();
  const touch = (t: Table, name: string) => {
    let names = touched.get(t);
    if (names === undefined) touched.set(t, names = new Set());
    names.add(name);
  };
  for (const item of items) {
    if (item.audit !== undefined) {
      const found = live.takeAudit(item.audit, item.question, table);
      if (typeof found === "string") {
        tally.missedAudits.push({ audit: item.audit, reason: found });
        tally.tracesOnly++;
        continue;
      }
      found.certificate.recordAudit(
        found.confidence,
        found.answer !== item.answer,
      );
      touch(found.table, found.question);
      tally.audits++;
      continue;
    }
    const counted = countTraceItem(live, table, guard, item);
    if (counted === null) {
      tally.tracesOnly++;
      continue;
    }
    touch(counted, item.question);
    tally.feedback++;
  }
  for (const [t, names] of touched) {
    for (const name of names) live.apply(t, name);
  }
  return tally;
}

/**
 * Counts a feedback item without an audit id as feedback on an uncertified
 * answer (see the module doc), and returns the table whose certificate
 * counted it; null when it is a trace only.
 */
export function countTraceItem(
  live: LiveController,
  table: Table,
  guard: DriftGuard,
  item: FeedbackItem,
): Table | null {
  if (!live.enabled) return null;
  // An answer served uncertified moments ago is counted as it was served,
  // without answering again; others are answered again now.
  const recent = live.takeRecent(item.question, item.text);
  if (recent !== undefined) {
    recent.certificate.recordFeedback(
      recent.confidence,
      recent.answer !== item.answer,
    );
    return recent.table;
  }
  const state = live.stateOf(table);
  const a = assess(
    table,
    state,
    prepareText(table, state, item.text),
    item.question,
    {},
    guard,
  );
  if (!isEligible(a) || a.answer.certified) return null;
  live.certificates(table)[a.slot]!.recordFeedback(
    a.fullConfidence,
    answerOf(a.answer) !== item.answer,
  );
  return table;
}
