/**
 * Audit sampling and the audits waiting for an answer. The sampler picks
 * each certified answer independently with probability `R` from a seeded
 * generator (nothing else decides it); a picked answer gets an id, and the
 * table's answer and confidence at decision time wait under that id until
 * the proxy reports what its model said, or until they expire.
 *
 * Pending audits live in bounded memory: at most `MAX_PENDING_AUDITS`
 * (the oldest is dropped first when full), each for `AUDIT_TTL_MS` at
 * most. An entry holds no request text, only the question and answer (the
 * table's own strings) and two numbers, so its size is fixed (about 200
 * bytes; 13 MB when full) and the count bounds the bytes. It holds the table
 * that answered only weakly: a table no longer served is freed, and an id
 * it gave is then `other_bundle`. An id is answered once; an unknown, expired or already answered id
 * is reported, never counted (the last ids answered, as many as may wait, are
 * remembered so that a repeat is told from an expiry).
 *
 * @module
 */

import { seededRandom, type Table } from "../engine/mod.ts";
import type { LiveCertificate } from "../guarantee/mod.ts";
import { hex } from "../format.ts";

/** Most audits waiting for an answer at once; the oldest is dropped first. */
export const MAX_PENDING_AUDITS = 65_536;
/** How long an audit waits for its answer: 10 minutes. */
export const AUDIT_TTL_MS = 10 * 60 * 1000;

/** Picks certified answers for audit, independently with probability `rate`. */
export class AuditSampler {
  readonly #random: () => number;
  /** The probability of a pick, in [0, 1]. */
  readonly rate: number;

  /** A sampler at `rate` (0 never picks) from the seed `seed`. */
  constructor(rate: number, seed: number) {
    if (!(rate >= 0 && rate <= 1)) {
      throw new RangeError(`An audit rate must be in [0, 1]: got ${rate}`);
    }
    this.rate = rate;
    this.#random = seededRandom(seed);
  }

  /** One draw: true with probability `rate`. */
  pick(): boolean {
    return this.pickAt(this.rate);
  }

  /** One draw: true with probability `rate` (a question's own, in [0, 1]). */
  pickAt(rate: number): boolean {
    return rate > 0 && this.#random() < rate;
  }
}

/** What an audit id stands for: the table's answer when it was given. */
export interface PendingAudit {
  /** The table that answered (its certificate and state are the ones to update). */
  readonly table: Table;
  readonly certificate: LiveCertificate;
  readonly question: string;
  /** The table's answer: an option, or yes (true) / no (false). */
  readonly answer: string | boolean;
  /** Its full-option confidence (what thresholds are compared with). */
  readonly confidence: number;
  /** When the id was given, on the store's clock (ms). */
  readonly at: number;
  /** The certificate's reset generation when the id was given (an audit given before a reset is not the new evidence's). */
  readonly generation?: number;
  /** The probability with which the answer was picked; absent: the service's audit rate. */
  readonly rate?: number;
  /** When the id was given, on the wall clock (ms since the epoch), for the feedback log. */
  readonly decidedAt?: number;
  /** The seal of the text the audit was given for (a keyed hash); feedback under another text does not take it. */
  readonly seal?: string;
}

/** A pending audit as kept: its table and certificate held weakly. */
interface KeptAudit extends Omit<PendingAudit, "table" | "certificate"> {
  readonly table: WeakRef<Table>;
  readonly certificate: WeakRef<LiveCertificate>;
}

/** Why an audit id could not be used. */
export type AuditMiss =
  | "unknown"
  | "expired"
  | "answered"
  | "other_question"
  | "forged"
  | "other_bundle"
  | "not_shared"
  | "malformed"
  | "store_error"
  | "text_mismatch";

/** Options of `PendingAudits`. */
export interface PendingAuditsOptions {
  /** Most pending audits (`MAX_PENDING_AUDITS` by default). */
  capacity?: number;
  /** Milliseconds an audit waits (`AUDIT_TTL_MS` by default). */
  ttlMs?: number;
  /** A clock in milliseconds (`performance.now` by default). */
  now?: () => number;
  /** A prefix making ids of this process unlike another's; random by default. */
  prefix?: string;
}

/**
 * The audits waiting for an answer, in bounded memory (see the module doc).
 *
 * @example
 * ```ts
 * import { PendingAudits } from "./audits.ts";
 * import type { LiveCertificate } from "../guarantee/mod.ts";
 * import type { Table } from "../engine/mod.ts";
 * declare const table: Table;
 * declare const certificate: LiveCertificate;
 * const pending = new PendingAudits();
 * const id = pending.add({ table, certificate, question: "intent", answer: "card_arrival", confidence: 0.93 });
 * pending.take(id, "intent"); // the audit, once; then "unknown"
 * ```
 */
export class PendingAudits {
  readonly #entries = new Map<string, KeptAudit>();
  /** Ids answered lately, oldest first (as many as audits may wait), to tell a repeat from an expiry. */
  readonly #answered = new Set<string>();
  readonly #capacity: number;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #prefix: string;
  #next = 0;
  /** Audits dropped unanswered (expired, or pushed out when full). */
  #dropped = 0;

  /** An empty store. */
  constructor(options: PendingAuditsOptions = {}) {
    this.#capacity = options.capacity ?? MAX_PENDING_AUDITS;
    this.#ttlMs = options.ttlMs ?? AUDIT_TTL_MS;
    this.#now = options.now ?? (() => performance.now());
    this.#prefix = options.prefix ?? randomPrefix();
    if (!(Number.isInteger(this.#capacity) && this.#capacity >= 1)) {
      throw new RangeError(
        `Pending audit capacity must be a positive integer: got ${this.#capacity}`,
      );
    }
  }

  /** Audits waiting now (expired ones may still count until the next add or take). */
  get size(): number {
    return this.#entries.size;
  }

  /** Audits dropped unanswered so far (expired, or the oldest when full). */
  get dropped(): number {
    return this.#dropped;
  }

  /** Most audits waiting at once. */
  get capacity(): number {
    return this.#capacity;
  }

  /** Milliseconds an audit waits. */
  get ttlMs(): number {
    return this.#ttlMs;
  }

  /** Keeps an audit and returns its new id. */
  add(audit: Omit<PendingAudit, "at">): string {
    const at = this.#now();
    this.#expire(at);
    if (this.#entries.size >= this.#capacity) {
      const oldest = this.#entries.keys().next().value!;
      this.#entries.delete(oldest);
      this.#dropped++;
    }
    const id = `${this.#prefix}${(this.#next++).toString(36)}`;
    this.#entries.set(id, {
      question: audit.question,
      answer: audit.answer,
      confidence: audit.confidence,
      table: new WeakRef(audit.table),
      certificate: new WeakRef(audit.certificate),
      at,
      ...(audit.generation === undefined
        ? {}
        : { generation: audit.generation }),
      ...(audit.rate === undefined ? {} : { rate: audit.rate }),
      ...(audit.decidedAt === undefined ? {} : { decidedAt: audit.decidedAt }),
      ...(audit.seal === undefined ? {} : { seal: audit.seal }),
    });
    return id;
  }

  /**
   * The audit of `id` for `question` as it waits, without taking it (to
   * say where a feedback line comes from before it is counted); undefined
   * when none waits under that id for that question.
   */
  peek(
    id: string,
    question: string,
  ): Omit<PendingAudit, "table" | "certificate"> | undefined {
    const found = this.#entries.get(id);
    if (found === undefined || found.question !== question) return undefined;
    const { table: _t, certificate: _c, ...rest } = found;
    return rest;
  }

  /**
   * The audit of `id` for `question`, removed so it is never counted
   * twice; or why there is none. With `seal` (the seal of the feedback's
   * text), an audit given for another text is `text_mismatch` and stays
   * pending: the right feedback may still come.
   */
  take(id: string, question: string, seal?: string): PendingAudit | AuditMiss {
    const now = this.#now();
    const found = this.#entries.get(id);
    if (found === undefined) {
      if (this.#answered.has(id)) return "answered";
      return this.#known(id) ? "expired" : "unknown";
    }
    if (found.question !== question) return "other_question";
    if (
      seal !== undefined && found.seal !== undefined && seal !== found.seal
    ) return "text_mismatch";
    this.#entries.delete(id);
    if (now - found.at > this.#ttlMs) {
      this.#dropped++;
      return "expired";
    }
    const table = found.table.deref();
    const certificate = found.certificate.deref();
    if (table === undefined || certificate === undefined) {
      this.#dropped++;
      return "other_bundle";
    }
    this.#answered.add(id);
    if (this.#answered.size > this.#capacity) {
      this.#answered.delete(this.#answered.values().next().value!);
    }
    return { ...found, table, certificate };
  }

  /** True when `id` was answered lately (nothing is taken). */
  wasAnswered(id: string): boolean {
    return this.#answered.has(id);
  }

  /** True when `id` looks like one this store gave, waiting or not (its miss is then no forgery). */
  knows(id: string): boolean {
    return this.#entries.has(id) || this.#known(id);
  }

  /** True when `id` looks like one this store gave (so a miss means it expired or was answered). */
  #known(id: string): boolean {
    if (!id.startsWith(this.#prefix)) return false;
    const n = parseInt(id.slice(this.#prefix.length), 36);
    return Number.isInteger(n) && n >= 0 && n < this.#next &&
      n.toString(36) === id.slice(this.#prefix.length);
  }

  /** Drops the audits older than the TTL (they sit in insertion order). */
  #expire(now: number): void {
    for (const [id, entry] of this.#entries) {
      if (now - entry.at <= this.#ttlMs) break;
      this.#entries.delete(id);
      this.#dropped++;
    }
  }
}

/** Eight random hex digits and a dash. */
function randomPrefix(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(4));
  return hex(bytes) + "-";
}
