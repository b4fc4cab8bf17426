/**
 * The live certificate in serving: per served table and question a
 * `LiveCertificate` (see `src/engine/live.ts`), fed at decision time and
 * by feedback, whose decision is applied to the table's engine state (the
 * threshold in force; a withdrawn certification, flag `drift` with rule
 * `live_audit`).
 *
 * An answer is *eligible* (it passed every rule but, perhaps, the
 * threshold) when its flag is null, `low_confidence`, or `drift` by rule
 * `live_audit`. Every eligible answer of every decision route is recorded
 * with its full-option confidence, whether it was certified and whether it
 * was picked for audit; only certified answers are picked.
 *
 * With audit rate 0 the live certificate is off: no answer is picked,
 * nothing is recorded, feedback is kept as traces only.
 *
 * @module
 */

import { LiveCertificate, type LiveState } from "../engine/live.ts";
import {
  reinstateCertification,
  setThresholdInForce,
  withdrawCertification,
} from "../engine/state.ts";
import type { Table } from "../engine/table.ts";
import { answerOf, type Assessment } from "../engine/verdict.ts";
import {
  AuditSampler,
  PendingAudits,
  type PendingAuditsOptions,
} from "./audits.ts";

/** Uncertified answers remembered for feedback without an audit id (see `takeRecent`). */
export const RECENT_ANSWERS = 16_384;

/** An uncertified answer as it was served: what feedback on it is counted against. */
export interface RecentAnswer {
  /** The table that answered. */
  table: Table;
  /** Its question's live certificate. */
  certificate: LiveCertificate;
  /** The table's answer. */
  answer: string | boolean;
  /** Its full-option confidence. */
  confidence: number;
}

/** The default audit rate of `serve` (`--audit-rate`). */
export const DEFAULT_AUDIT_RATE = 0.02;

/** How the live certificate runs. */
export interface LiveOptions {
  /** Probability that a certified answer is picked for audit, in [0, 1]; 0 turns the live certificate off. */
  auditRate: number;
  /** Seed of the audit sampler; random when absent. */
  auditSeed?: number | undefined;
  /** Limits and clock of the pending audits. */
  pending?: PendingAuditsOptions | undefined;
}

/** True when an answer passed every rule but, perhaps, the threshold (see the module doc). */
export function isEligible(a: Assessment): boolean {
  if (a.slot < 0) return false;
  const { flag } = a.answer;
  return flag === null || flag === "low_confidence" ||
    (flag === "drift" && a.answer.driftRule === "live_audit");
}

/** The live certificates of one table, by question position. */
type Certificates = readonly LiveCertificate[];

/** A random 32-bit seed. */
function randomSeed(): number {
  return crypto.getRandomValues(new Uint32Array(1))[0]!;
}

/**
 * The live certificates of every table served, the audit sampler and the
 * pending audits.
 *
 * @example
 * ```ts
 * import { LiveController } from "./controller.ts";
 * import type { Table } from "../engine/table.ts";
 * import type { Assessment } from "../engine/verdict.ts";
 * declare const table: Table;
 * declare const answers: Assessment[];
 * const live = new LiveController({ auditRate: 0.02, auditSeed: 1 });
 * const audits = live.recordDecisions(table, answers); // ids of the picked answers
 * ```
 */
export class LiveController {
  readonly #sampler: AuditSampler;
  /** Audits waiting for the proxy's answer. */
  readonly pending: PendingAudits;
  /** The seed the sampler started from. */
  readonly seed: number;
  readonly #tables = new WeakMap<Table, Certificates>();
  /** Recent uncertified eligible answers by question and text, oldest first (see `takeRecent`). */
  readonly #recent = new Map<string, RecentAnswer>();

  /** A controller for `options`; throws `RangeError` for a rate outside [0, 1]. */
  constructor(options: LiveOptions) {
    this.seed = options.auditSeed ?? randomSeed();
    this.#sampler = new AuditSampler(options.auditRate, this.seed);
    this.pending = new PendingAudits(options.pending);
  }

  /** The audit rate. */
  get auditRate(): number {
    return this.#sampler.rate;
  }

  /** True when the live certificate runs (audit rate above 0). */
  get enabled(): boolean {
    return this.#sampler.rate > 0;
  }

  /** The certificates of `table` (made on first use, one per question). */
  certificates(table: Table): Certificates {
    let found = this.#tables.get(table);
    if (found === undefined) {
      const rate = this.#sampler.rate;
      found = table.questions.map((q) =>
        new LiveCertificate(q.calibration.candidates, q.calibration.threshold, {
          alpha: q.calibration.alpha,
          delta: q.calibration.delta,
          auditRate: rate,
        })
      );
      this.#tables.set(table, found);
    }
    return found;
  }

  /**
   * Records the answers of one decision and picks certified ones for
   * audit. Returns the audit id of each answer (undefined when not
   * picked), or undefined when none was picked.
   */
  recordDecisions(
    table: Table,
    answers: readonly Assessment[],
    text?: string,
  ): (string | undefined)[] | undefined {
    if (!this.enabled) return undefined;
    let ids: (string | undefined)[] | undefined;
    const certificates = this.certificates(table);
    for (let i = 0; i < answers.length; i++) {
      const a = answers[i]!;
      if (!isEligible(a)) continue;
      const certificate = certificates[a.slot]!;
      const certified = a.answer.certified;
      const picked = certified && this.#sampler.pick();
      certificate.recordDecision(a.fullConfidence, certified, picked);
      if (!certified && text !== undefined) {
        this.#remember(a.question + "\u0000" + text, {
          table,
          certificate,
          answer: answerOf(a.answer)!,
          confidence: a.fullConfidence,
        });
      }
      if (!picked) continue;
      ids ??= new Array<string | undefined>(answers.length);
      ids[i] = this.pending.add({
        table,
        certificate,
        question: a.question,
        answer: answerOf(a.answer)!,
        confidence: a.fullConfidence,
      });
    }
    return ids;
  }

  /**
   * The uncertified answer this service gave lately to `question` about
   * `text` (the last one, among the `RECENT_ANSWERS` most recent), taken
   * once; undefined when it has none. Feedback on it is counted with the
   * confidence it had when it was served, without answering again.
   */
  takeRecent(question: string, text: string): RecentAnswer | undefined {
    const key = question + "\u0000" + text;
    const found = this.#recent.get(key);
    if (found !== undefined) this.#recent.delete(key);
    return found;
  }

  #remember(key: string, answer: RecentAnswer): void {
    this.#recent.delete(key);
    this.#recent.set(key, answer);
    if (this.#recent.size > RECENT_ANSWERS) {
      this.#recent.delete(this.#recent.keys().next().value!);
    }
  }

  /**
   * Applies question `name`'s live decision to `table`'s state: the
   * threshold in force, or certification withdrawn (and reinstated once a
   * threshold is supported again).
   */
  apply(table: Table, name: string): void {
    if (!this.enabled) return;
    const slot = table.questions.findIndex((q) => q.name === name);
    if (slot < 0) return;
    const decision = this.certificates(table)[slot]!.decide();
    if (decision.reason === "uncalibrated") return;
    if (decision.threshold === null) withdrawCertification(table, name);
    else {
      setThresholdInForce(table, name, decision.threshold);
      reinstateCertification(table, name);
    }
  }

  /** The live state of every question of `table`, by name (empty when off). */
  states(table: Table): Map<string, LiveState> {
    const out = new Map<string, LiveState>();
    if (!this.enabled) return out;
    const certificates = this.certificates(table);
    table.questions.forEach((q, i) =>
      out.set(q.name, certificates[i]!.state())
    );
    return out;
  }
}
