/**
 * Counting what a reference model answered in the live certificates, once
 * per decision. An item with an id the service gave is counted by the id:
 * an audit's answer and confidence are the ones kept under (or signed
 * into) the id, never recomputed, and so are an uncertified answer's (its
 * decision id). An item without an id counts only when it answers an
 * uncertified answer served lately (taken once, so a text sent again does
 * not count again); any other is a trace only. Unknown, expired or already
 * answered ids are reported and never counted. Then the live decision of
 * every question touched is applied.
 *
 * @module
 */

import type { Answerer, DriftGuard, Table } from "../engine/mod.ts";
import type { TraceRecord } from "../traces/mod.ts";
import type { AuditMiss } from "./audits.ts";
import { auditLogName } from "./_log_name.ts";
import { isEligible, type LiveController } from "./controller.ts";

/** What the reference model answered about one text. */
export interface FeedbackItem {
  question: string;
  /** The text the table reads (the state, serialised when an object). */
  text: string;
  /** What the reference model answered: an option, or yes (true) / no (false). */
  answer: string | boolean;
  /**
   * The id the service gave with the answer (an audit's, or an uncertified
   * answer's `feedback_id`), when the item carries one.
   */
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

/** A feedback item that is no label, and why (see `screenFeedback`). */
export interface ScreenedItem {
  /** Its position among the items screened. */
  index: number;
  item: FeedbackItem;
  reason: AuditMiss;
}

/**
 * Splits feedback `items` into those that may be labels and those that
 * are none: an item whose id no key held signed (after the key file is
 * read again, once, when one is used: another replica may have read a new
 * key first), whose numbers are unusable, or that was given for another
 * question or another text than the item's (`LiveController.screenId`).
 * Those are counted and kept apart, never logged as a label nor counted in
 * a certificate: a proxy that pairs ids with other texts, by design or by
 * a bug, feeds nothing. Nothing is taken.
 */
export async function screenFeedback(
  live: LiveController,
  items: readonly FeedbackItem[],
): Promise<{ kept: FeedbackItem[]; screened: ScreenedItem[] }> {
  const reasons = items.map((item) =>
    item.audit === undefined
      ? null
      : live.screenId(item.audit, item.question, item.text)
  );
  if (reasons.includes("forged") && await live.rereadKeys()) {
    items.forEach((item, i) => {
      if (reasons[i] === "forged") {
        reasons[i] = live.screenId(item.audit!, item.question, item.text);
      }
    });
  }
  const kept: FeedbackItem[] = [];
  const screened: ScreenedItem[] = [];
  items.forEach((item, index) => {
    const reason = reasons[index];
    if (reason == null) kept.push(item);
    else screened.push({ index, item, reason });
  });
  return { kept, screened };
}

/**
 * Where a feedback item comes from, as its line in the feedback log says:
 * with an id the service gave, `audit` (a certified answer the calibration
 * coin picked, with probability `samplingProbability`), `sample` (an
 * uncertified one it picked) or `uncertified` (one it did not pick: the
 * proxy asks for every uncertified answer, probability 1); without a usable
 * id, `uncertified` when the table serving now does not certify its answer,
 * else `trace` (what the client chose to send). Only the picked decisions
 * are a random sample of the traffic (`src/train/feedback_sample.ts`).
 */
export type FeedbackSource = "audit" | "sample" | "uncertified" | "trace";

/** Where a feedback item comes from and the bundle it answered. */
export interface FeedbackOrigin {
  source: FeedbackSource;
  /** With an id, the probability with which its answer came to be asked; else null. */
  samplingProbability: number | null;
  /** For an audit, its name in the log (`auditLogName`); else undefined. */
  audit?: string | undefined;
  /** For an uncertified answer's id, its name in the log; else undefined. */
  id?: string | undefined;
  /** With an id, when the decision was made (ms since the epoch). */
  decidedAt?: number | undefined;
  /** With an id, the process that made the decision (8 hex digits). */
  issuer?: string | undefined;
  /** The bundle that answered: the id's (16 hex digits), else the one serving when the item arrived. */
  bundle: string;
}

/**
 * The origin of `item` (see `FeedbackSource`): an item with an id the
 * service gave is what its id says; another is `uncertified` when
 * `answerer` (the table served), read through `guard` (not fed), leaves
 * its answer uncertified and eligible, else `trace`. Nothing is counted or
 * taken.
 */
export function feedbackOrigin(
  live: LiveController,
  answerer: Answerer,
  guard: DriftGuard,
  item: FeedbackItem,
  bundle: string,
): FeedbackOrigin {
  if (item.audit !== undefined) {
    const o = live.originOf(item.audit, item.question, item.text);
    if (o === null) {
      return { source: "trace", samplingProbability: null, bundle };
    }
    const name = auditLogName(item.audit);
    return {
      source: o.kind,
      samplingProbability: o.kind === "uncertified" ? 1 : o.rate,
      ...(o.kind === "audit" ? { audit: name } : { id: name }),
      ...(Number.isNaN(o.decidedAt) ? {} : { decidedAt: o.decidedAt }),
      issuer: o.issuer,
      bundle: o.bundle ?? bundle.slice(0, 16),
    };
  }
  const a = answerer.answer(
    answerer.prepare(item.text),
    item.question,
    {},
    guard,
  );
  const source = isEligible(a) && !a.answer.certified ? "uncertified" : "trace";
  return { source, samplingProbability: null, bundle };
}

/**
 * True when feedback `item`, logged with `origin`, came without the id
 * its decision most likely carried: it names no id, and the table serving
 * (`table`) leaves its answer uncertified (every uncertified answer gets
 * one), or does not have its question while `learning` (a learning
 * service's answers to questions it has not learned carry one too). Then
 * it is counted (`LiveController.noteIdless`) with its question's rate.
 */
export function idlessFeedback(
  live: LiveController,
  table: Table,
  item: FeedbackItem,
  origin: FeedbackOrigin,
  learning: boolean,
): boolean {
  if (!live.enabled || item.audit !== undefined) return false;
  const slot = table.questions.findIndex((q) => q.name === item.question);
  const idless = origin.source === "uncertified" || (slot < 0 && learning);
  if (idless) {
    live.noteIdless(slot < 0 ? live.auditRate : live.rateOf(table, slot));
  }
  return idless;
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
    if (item.audit !== undefined && live.isDecisionId(item.audit)) {
      const counted = live.takeDecision(
        item.audit,
        item.question,
        item.text,
        item.answer,
        table,
      );
      if (typeof counted === "string") {
        tally.missedAudits.push({ audit: item.audit, reason: counted });
        tally.tracesOnly++;
      } else if (counted === null) tally.tracesOnly++;
      else {
        touch(counted, item.question);
        tally.feedback++;
      }
      continue;
    }
    if (item.audit !== undefined) {
      const found = live.takeAudit(
        item.audit,
        item.question,
        table,
        item.text,
      );
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
 * Counts a feedback item without an id as feedback on an uncertified
 * answer when it answers one served lately (see the module doc): that
 * answer is counted as it was served, once; returns the table whose
 * certificate counted it, null when the item is a trace only (any other
 * item: counting it would let a text sent again count again).
 */
export function countTraceItem(
  live: LiveController,
  _table: Table,
  _guard: DriftGuard,
  item: FeedbackItem,
): Table | null {
  if (!live.enabled) return null;
  const recent = live.takeRecent(item.question, item.text);
  if (recent === undefined) return null;
  recent.certificate.recordFeedback(
    recent.confidence,
    recent.answer !== item.answer,
  );
  return recent.table;
}
