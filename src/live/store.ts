/**
 * Where a fleet pools its live certificates (`serve --live-store`): the
 * contract every store keeps, the layout of a question's evidence and
 * policy as named counters, and an in-memory store with the same semantics
 * (for tests and simulations; `redis_store.ts` is the real one).
 *
 * Per bundle id the store keeps an *epoch* (8 hex digits, made by the first
 * replica that asks; a store that lost its data makes a new one, and the
 * live certificate of that bundle starts afresh, as after a reload), and per
 * question one record of counters: the evidence (`LiveEvidence` as fields
 * `a<j>`, `d<j>`, `f<j>`, `l<j>`, `u<j>` (audits among `l<j>`), `audited`, `audit_disagreements`,
 * `feedback`, `uncertified`) and the policy (`floor`, `in_force`, and the
 * `version` that every change of the policy bumps). A question's second
 * tier is a record of its own (`QUESTION#semantic`, `fleet.ts`), kept and
 * reset like any other: the store does not tell tiers apart.
 *
 * A sync sends batches, each applied whole and at most once (a batch id is
 * remembered for `BATCH_MEMORY_MS`, so a batch sent again after a lost
 * reply is not counted twice): first its counts of decisions, then its
 * audits, each counted only when its id was not counted before within the
 * audit's lifetime. Then it reads every question's record back. Nothing is
 * applied when the replica's epoch is not the store's. A policy changes only
 * by compare-and-set on its version, and never to a higher floor (a
 * refutation stands) nor to fewer feedback alarms (an alarm latches), and
 * the change is announced to every replica.
 *
 * Per bundle and question the store also keeps a *reset generation* (0 at
 * first). A reset (`reset`) bumps it and deletes the question's record (its
 * evidence and policy), atomically, and is announced like a policy change.
 * A sync says which generation the replica counts each question in: counts
 * and audits of another generation are not applied (audits answered
 * `not_shared`), and the reply gives the store's generations, so a replica
 * that counted in an old one starts that question afresh. A replica that
 * restarts reads the generation and keeps the evidence.
 *
 * @module
 */

import {
  emptyEvidence,
  type LiveEvidence,
  type LivePolicy,
} from "../guarantee/mod.ts";
import { hex } from "../format.ts";

/** How long a store remembers a batch id, in ms: a batch sent again within it is not counted twice. */
export const BATCH_MEMORY_MS = 60 * 60 * 1000;

/** Counter increments of one question: `[field, n]` pairs. */
export type Fields = readonly (readonly [string, number])[];

/** An audit outcome to count once per fleet. */
export interface StoredAudit {
  /** The audit's name across the fleet (its id's tag). */
  id: string;
  /** How long its name is remembered, in ms (the rest of its lifetime). */
  ttlMs: number;
  /** Position of its question in the sync's `questions`. */
  question: number;
  /** The increments it makes. */
  fields: Fields;
}

/** One batch of a replica's evidence, applied whole and at most once. */
export interface Batch {
  /** Unique per batch; a batch sent again keeps its id. */
  id: string;
  /** Per question (as in the sync's `questions`): counts of decisions, feedback and the like. */
  adds: readonly Fields[];
  /** Audits, each counted at most once per fleet. */
  audits: readonly StoredAudit[];
}

/** What a sync asks. */
export interface SyncRequest {
  /** The bundle id. */
  bundle: string;
  /** The epoch the replica counts in; "" before it knows one. */
  epoch: string;
  /** The epoch to make when the store has none. */
  proposal: string;
  /** Names of the questions to update and read. */
  questions: readonly string[];
  /** Per question, the reset generation the replica counts in (-1 before it knows). */
  generations: readonly number[];
  batches: readonly Batch[];
}

/**
 * What became of an audit sent in a sync; `malformed` (a value no store
 * takes, never sent) and `store_error` (the store refused the sync that
 * carried it) are told by the replica, not the store.
 */
export type AuditOutcome =
  | "counted"
  | "answered"
  | "not_shared"
  | "malformed"
  | "store_error";

/** What a sync answers. */
export interface SyncReply {
  /** The store's epoch for the bundle (nothing was applied when it is not the request's). */
  epoch: string;
  /** Per batch and audit. A batch applied before (sent again) reports its audits `counted`. */
  audits: AuditOutcome[][];
  /** Per question: its record, field by field (absent fields are 0). */
  records: Record<string, number>[];
  /** Per question: its reset generation in the store. */
  generations: number[];
}

/** A fleet's shared store. */
export interface LiveStore {
  /** Where it is, in words (no password). */
  readonly description: string;
  /** Applies batches and reads records back (see the module doc); rejects when the store cannot be reached. */
  sync(request: SyncRequest): Promise<SyncReply>;
  /**
   * Sets a question's policy when its version is still `version`, the
   * epoch still `epoch` and its reset generation still `generation`; true
   * when set (and announced to `subscribe`rs).
   */
  setPolicy(
    bundle: string,
    epoch: string,
    question: string,
    version: number,
    policy: LivePolicy,
    generation: number,
  ): Promise<boolean>;
  /** Bumps the reset generation of `questions` and deletes their records, at once; announced to `subscribe`rs. */
  reset(bundle: string, questions: readonly string[]): Promise<void>;
  /** Calls `onChange` with the bundle id whenever a policy is set by any replica. */
  subscribe(onChange: (bundle: string) => void): Promise<void>;
  /** Closes the connections. */
  close(): Promise<void>;
}

/** Checks a `--live-store` address; throws `RangeError` saying what is wrong. */
export function parseStoreUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new RangeError(
      `--live-store must be redis://HOST:PORT[/DB], got ${
        JSON.stringify(text)
      }`,
    );
  }
  if (url.protocol !== "redis:" || url.hostname === "") {
    throw new RangeError(
      `--live-store must be redis://HOST:PORT[/DB], got ${
        JSON.stringify(text)
      }`,
    );
  }
  const db = url.pathname.replace(/^\//, "");
  if (db !== "" && !/^\d{1,2}$/.test(db)) {
    throw new RangeError(
      `--live-store: the database must be a number, got ${JSON.stringify(db)}`,
    );
  }
  return url;
}

/** The increments of `e` (nonzero counts only). */
export function evidenceFields(e: LiveEvidence): Fields {
  const out: [string, number][] = [];
  const lists: [string, number[]][] = [
    ["a", e.agreed],
    ["d", e.auditDisagreed],
    ["f", e.feedbackDisagreed],
    ["l", e.labelled],
    ["u", e.auditLabelled],
  ];
  for (const [p, list] of lists) {
    list.forEach((n, j) => {
      if (n !== 0) out.push([`${p}${j}`, n]);
    });
  }
  const totals: [string, number][] = [
    ["audited", e.audited],
    ["audit_disagreements", e.auditDisagreements],
    ["feedback", e.feedback],
    ["uncertified", e.uncertified],
  ];
  for (const t of totals) if (t[1] !== 0) out.push(t);
  return out;
}

/** The evidence of a record over `k` candidates. */
export function recordEvidence(
  record: Record<string, number>,
  k: number,
): LiveEvidence {
  const e = emptyEvidence(k);
  const get = (f: string) => record[f] ?? 0;
  for (let j = 0; j < k; j++) {
    e.agreed[j] = get(`a${j}`);
    e.auditDisagreed[j] = get(`d${j}`);
    e.feedbackDisagreed[j] = get(`f${j}`);
    e.labelled[j] = get(`l${j}`);
    e.auditLabelled[j] = get(`u${j}`);
  }
  e.audited = get("audited");
  e.auditDisagreements = get("audit_disagreements");
  e.feedback = get("feedback");
  e.uncertified = get("uncertified");
  return e;
}

/** The policy of a record and its version; null policy when none was ever set. */
export function recordPolicy(
  record: Record<string, number>,
): { policy: LivePolicy | null; version: number } {
  const version = record.version ?? 0;
  if (record.floor === undefined || record.in_force === undefined) {
    return { policy: null, version };
  }
  return {
    policy: {
      floor: record.floor,
      inForce: record.in_force,
      alarms: record.alarms ?? 0,
    },
    version,
  };
}

/** Eight random hex digits. */
export function randomHex8(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(4));
  return hex(bytes);
}

/**
 * A store in this process's memory, with the semantics of the module doc:
 * several `FleetLive`s sharing one stand for replicas sharing a Redis
 * server. `down = true` makes every call reject, as an unreachable store
 * does; `clear()` loses everything, as a store restarted without
 * persistence does.
 */
export class MemoryStore implements LiveStore {
  readonly description = "memory";
  /** When true, every call rejects (an unreachable store). */
  down = false;
  readonly #epochs = new Map<string, string>();
  readonly #records = new Map<string, Map<string, number>>();
  readonly #seen = new Map<string, number>();
  readonly #generations = new Map<string, number>();
  readonly #listeners: ((bundle: string) => void)[] = [];
  readonly #now: () => number;

  /** A store on the clock `now` (ms; `Date.now` by default). */
  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  #check(): void {
    if (this.down) throw new Error("store unreachable (down)");
  }

  #record(bundle: string, question: string): Map<string, number> {
    const key = `${bundle}\u0000${question}`;
    let r = this.#records.get(key);
    if (r === undefined) this.#records.set(key, r = new Map());
    return r;
  }

  /** Remembers `id` until `ttlMs` from now; false when it was remembered already. */
  #once(id: string, ttlMs: number): boolean {
    const now = this.#now();
    const until = this.#seen.get(id);
    if (until !== undefined && until > now) return false;
    this.#seen.set(id, now + ttlMs);
    return true;
  }

  sync(request: SyncRequest): Promise<SyncReply> {
    try {
      this.#check();
    } catch (e) {
      return Promise.reject(e);
    }
    const { bundle } = request;
    let epoch = this.#epochs.get(bundle);
    if (epoch === undefined && request.proposal !== "") {
      this.#epochs.set(bundle, epoch = request.proposal);
    }
    const records = request.questions.map((q) => this.#record(bundle, q));
    const generations = request.questions.map((q) =>
      this.#generation(bundle, q)
    );
    const current = (q: number) =>
      generations[q] === (request.generations[q] ?? -1);
    const audits: AuditOutcome[][] = [];
    for (const batch of request.batches) {
      if (epoch === undefined || epoch !== request.epoch) {
        audits.push(batch.audits.map(() => "not_shared"));
        continue;
      }
      if (!this.#once(`${bundle}:batch:${batch.id}`, BATCH_MEMORY_MS)) {
        audits.push(batch.audits.map(() => "counted"));
        continue;
      }
      batch.adds.forEach((fields, i) => {
        if (current(i)) add(records[i]!, fields);
      });
      audits.push(batch.audits.map((a) => {
        if (!current(a.question)) return "not_shared";
        if (!this.#once(`${bundle}:audit:${a.id}`, a.ttlMs)) return "answered";
        add(records[a.question]!, a.fields);
        return "counted";
      }));
    }
    return Promise.resolve({
      epoch: epoch ?? "",
      audits,
      records: records.map((r) => Object.fromEntries(r)),
      generations,
    });
  }

  #generation(bundle: string, question: string): number {
    return this.#generations.get(`${bundle}\u0000${question}`) ?? 0;
  }

  reset(bundle: string, questions: readonly string[]): Promise<void> {
    try {
      this.#check();
    } catch (e) {
      return Promise.reject(e);
    }
    for (const q of questions) {
      const key = `${bundle}\u0000${q}`;
      this.#generations.set(key, (this.#generations.get(key) ?? 0) + 1);
      this.#records.delete(key);
    }
    for (const l of this.#listeners) queueMicrotask(() => l(bundle));
    return Promise.resolve();
  }

  setPolicy(
    bundle: string,
    epoch: string,
    question: string,
    version: number,
    policy: LivePolicy,
    generation: number,
  ): Promise<boolean> {
    try {
      this.#check();
    } catch (e) {
      return Promise.reject(e);
    }
    if (this.#epochs.get(bundle) !== epoch) return Promise.resolve(false);
    if (this.#generation(bundle, question) !== generation) {
      return Promise.resolve(false);
    }
    const r = this.#record(bundle, question);
    const floor = r.get("floor");
    if ((r.get("version") ?? 0) !== version) return Promise.resolve(false);
    if (floor !== undefined && policy.floor > floor) {
      return Promise.resolve(false);
    }
    const alarms = r.get("alarms") ?? 0;
    if ((alarms & ~(policy.alarms ?? 0)) !== 0) return Promise.resolve(false);
    r.set("floor", policy.floor);
    r.set("in_force", policy.inForce);
    r.set("alarms", policy.alarms ?? 0);
    r.set("version", version + 1);
    for (const l of this.#listeners) queueMicrotask(() => l(bundle));
    return Promise.resolve(true);
  }

  subscribe(onChange: (bundle: string) => void): Promise<void> {
    this.#listeners.push(onChange);
    return Promise.resolve();
  }

  /** Loses every epoch, record and remembered id. */
  clear(): void {
    this.#epochs.clear();
    this.#records.clear();
    this.#seen.clear();
    this.#generations.clear();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

function add(record: Map<string, number>, fields: Fields): void {
  for (const [f, n] of fields) record.set(f, (record.get(f) ?? 0) + n);
}
