/**
 * One live certificate for a fleet of replicas (`serve --live-store`).
 *
 * Each replica counts what it sees (its decisions, the feedback and the
 * audits it is sent) in local certificates used only as counters, and hands
 * the counts to the store in batches: every `FLEET_SYNC_MS`, and at once
 * for every feedback request that carries audits (audits of concurrent
 * requests share one batch). A batch is applied atomically and at most
 * once, its counts of decisions first, then its audits, each counted once
 * per fleet (`store.ts`). The store's evidence of a question is then the
 * sum of every replica's: the evidence one process would have gathered
 * from all the traffic, the same observations in a slightly different
 * order (a replica's decisions reach the store at most one sync late, and
 * always before the audits it counts itself). With fixed bet fractions the
 * capital depends only on the counts, so the pooled e-process is the lone
 * process's, with the same guarantees (`src/engine/live_certificate.ts`).
 *
 * After each sync the replica weighs the pooled evidence under the fleet's
 * policy (`LiveCertificate.restore` then `decide`); a change (a refutation,
 * a move) is written by compare-and-set on the policy's version, so two
 * replicas never both move it from the same state, and announced to every
 * replica, which reads it at once; a replica that misses the announcement
 * reads it at its next sync. So every replica applies the fleet's threshold
 * in force within one sync (`FLEET_SYNC_MS`) of its change, and within
 * milliseconds while announcements arrive.
 *
 * The store unreachable: the replica keeps the fleet's threshold last read,
 * weighs the pooled evidence it last read plus what it has counted since,
 * and applies what that says only when it is stricter (a refutation, a
 * withdrawal), never a more lenient threshold; its counts wait and are sent
 * when the store answers again (a batch whose reply was lost is sent again
 * under the same id, so it is never counted twice), and the fleet's
 * threshold then applies again. A replica that has never read the store
 * (started while it was unreachable) withholds certification until it has.
 *
 * A stop (`stop`) tries the store for at most `STOP_SYNC_MS`; what it
 * could not deliver (the audits acknowledged while the store was
 * unreachable, batches whose reply was lost, the decision counts) is taken
 * by `takeUndelivered` as journal entries (`journal.ts`) for the next start
 * to hand back (`addJournal`): they are replayed into the store before
 * anything else, each batch under its own id, so nothing counts twice.
 *
 * @module
 */

import type { Table, TableState } from "../engine/mod.ts";
import {
  addEvidence,
  emptyEvidence,
  LiveCertificate,
  type LiveDecision,
  type LiveEvidence,
  type LiveState,
} from "../guarantee/mod.ts";
import type { FleetTrack } from "./fleet_tracks.ts";
import {
  applyAll,
  type Pooled,
  type Served,
  servedOf,
} from "./fleet_served.ts";
import { replayEntry } from "./fleet_replay.ts";
import { journalAudits, type JournalEntry } from "./journal.ts";
import {
  type AuditOutcome,
  type Batch,
  evidenceFields,
  type LiveStore,
  randomHex8,
  recordEvidence,
  recordPolicy,
  type StoredAudit,
} from "./store.ts";
import { StoreRejected, StoreReplyLost } from "./store_errors.ts";

export { StoreRejected, StoreReplyLost };

/** Milliseconds between a replica's syncs with the store. */
export const FLEET_SYNC_MS = 250;
/** Most milliseconds `start` waits for the first sync. */
export const FIRST_SYNC_MS = 3000;
/** Most milliseconds `stop` keeps trying to deliver what waits for the store. */
export const STOP_SYNC_MS = 3000;

/** How a fleet's live certificate runs. */
export interface FleetOptions {
  /** The shared store. */
  store: LiveStore;
  /** This replica's name, as statistics show it. */
  replica: string;
  /** Milliseconds between syncs (`FLEET_SYNC_MS`). */
  syncMs?: number | undefined;
  /** Where changes of the store's reachability are told; stderr by default. */
  log?: ((message: string) => void) | undefined;
  /** Told when the store says questions `names` of `table` were reset (their counters must start afresh). */
  onReset?: ((table: Table, names: string[]) => void) | undefined;
  /** Told the journal entries still undelivered whenever one given by `addJournal` has been delivered (or given up). */
  onJournal?: ((remaining: JournalEntry[]) => void) | undefined;
}

/** Whether the store answers: not asked yet, answering, or not answering. */
export type FleetLink = "connecting" | "connected" | "unreachable";

/** A fleet's state as statistics show it. */
export interface FleetStatus {
  replica: string;
  store: string;
  link: FleetLink;
  /** The evidence pool (store epoch) of the bundle served; "" before the first sync. */
  epoch: string;
  /** Milliseconds since the last sync that reached the store; null before one. */
  lastSyncAgoMs: number | null;
  /** Syncs that reached the store, and that failed. */
  syncs: number;
  failures: number;
  /** Audits and batches counted here but not yet in the store (the store unreachable). */
  waitingAudits: number;
  waitingBatches: number;
  /** Syncs and policy changes the store refused with an error (`StoreRejected`), and the audits given up with the syncs. */
  rejectedSyncs: number;
  rejectedAudits: number;
  /** Audits of a journal (`addJournal`) not yet replayed into the store. */
  journalAudits: number;
}

/** An audit checked and ready for the store, with the evidence it adds. */
export interface StagedAudit {
  readonly stored: StoredAudit;
  readonly evidence: LiveEvidence;
}

/** A batch whose reply was lost (it may have been applied): sent again as it is. */
interface Unsent {
  readonly batch: Batch;
  readonly evidence: readonly LiveEvidence[];
}

interface Waiter {
  readonly audits: readonly StagedAudit[];
  readonly resolve: (outcomes: AuditOutcome[]) => void;
}

/** The shared live certificate of the fleet, as one replica runs it (see the module doc). */
export class FleetLive {
  readonly #store: LiveStore;
  readonly #replica: string;
  readonly #syncMs: number;
  readonly #log: (message: string) => void;
  readonly #onReset: (table: Table, names: string[]) => void;
  readonly #onJournal: (remaining: JournalEntry[]) => void;
  #served: Served | null = null;
  #epoch = "";
  #link: FleetLink = "connecting";
  #lastSync: number | null = null;
  #syncs = 0;
  #failures = 0;
  #rejectedSyncs = 0;
  #rejectedAudits = 0;
  #queue: Waiter[] = [];
  /** Audits counted while the store was unreachable, to be sent. */
  #held: StagedAudit[] = [];
  #unsent: Unsent[] = [];
  /** Entries of a journal to replay into the store, oldest first. */
  #journaled: JournalEntry[] = [];
  /**
   * The sync awaiting the store: its new batch (null while joining: none
   * is sent) and every audit it carries or holds.
   */
  #inFlight: { batch: Batch | null; audits: StagedAudit[] } | null = null;
  #running: Promise<void> | null = null;
  #again = false;
  #timer: ReturnType<typeof setInterval> | undefined;
  #subscribed = false;

  /** A fleet certificate over `options.store`; nothing runs before `serve` and `start`. */
  constructor(options: FleetOptions) {
    this.#store = options.store;
    this.#replica = options.replica;
    this.#syncMs = options.syncMs ?? FLEET_SYNC_MS;
    this.#log = options.log ?? ((m) => console.error(m));
    this.#onReset = options.onReset ?? (() => {});
    this.#onJournal = options.onJournal ?? (() => {});
  }

  /**
   * Journal entries to replay into the store (a previous run's undelivered
   * syncs, `takeUndelivered`), before anything else at every sync until
   * the store has taken them.
   */
  addJournal(entries: readonly JournalEntry[]): void {
    this.#journaled.push(...entries);
    if (entries.length > 0) this.kick();
  }

  /**
   * What waits for the store, taken as journal entries (none left here):
   * the journal entries not replayed yet, then the pool served: batches
   * whose reply was lost and the one awaiting the store (each under its
   * id), and a new batch of the audits held and the decision counts. The
   * audits of feedback requests still waiting are resolved `counted`.
   */
  takeUndelivered(): JournalEntry[] {
    const out = this.#journaled;
    this.#journaled = [];
    const s = this.#served;
    if (s === null) return out;
    const batches: Batch[] = this.#unsent.map((u) => u.batch);
    const flying = this.#inFlight;
    if (
      flying?.batch && !batches.some((b) => b.id === flying.batch!.id)
    ) batches.push(flying.batch);
    const waiters = this.#queue.splice(0);
    const audits = [
      ...(flying === null ? this.#held : flying.batch ? [] : flying.audits),
      ...waiters.flatMap((w) => w.audits),
    ];
    const adds = s.counters.map((c) => evidenceFields(c.takeEvidence()));
    if (audits.length > 0 || adds.some((a) => a.length > 0)) {
      batches.push({
        id: randomHex8() + randomHex8(),
        adds,
        audits: audits.map((a) => a.stored),
      });
    }
    this.#held = [];
    this.#unsent = [];
    for (const w of waiters) w.resolve(w.audits.map(() => "counted"));
    if (batches.length > 0) {
      out.push({
        bundle: s.bundle,
        epoch: this.#epoch,
        questions: [...s.names],
        generations: [...s.generations],
        batches,
        replica: this.#replica,
        written: new Date().toISOString(),
      });
    }
    return out;
  }

  /** True while something waits for the store (journal entries, audits, batches, counts). */
  #waiting(): boolean {
    return this.#journaled.length > 0 || this.#held.length > 0 ||
      this.#unsent.length > 0 || this.#queue.length > 0 ||
      this.#inFlight !== null ||
      (this.#served?.counters.some((c) => hasEvidence(c.evidence())) ??
        false);
  }

  /**
   * Replays the journal entries into the store, oldest first; stops at the
   * first the store does not answer (it stays, to be tried at the next
   * sync). An entry the store refuses, or whose evidence pool the store no
   * longer has, is given up with a line on the log.
   */
  async #replay(): Promise<void> {
    while (this.#journaled.length > 0) {
      const e = this.#journaled[0]!;
      const { lost, outcomes } = await replayEntry(this.#store, e);
      this.#journaled.shift();
      const audits = journalAudits([e]);
      const counted = outcomes.filter((o) => o === "counted").length;
      const answered = outcomes.filter((o) => o === "answered").length;
      this.#log(
        lost === null
          ? `live journal: replayed ${e.batches.length} batch(es) of ${e.replica} (${e.written}) into the store: ${counted} audit(s) counted, ${answered} counted before, ${
            audits - counted - answered
          } of another reset generation`
          : `live journal: ${audits} audit(s) of ${e.replica} (${e.written}) given up: ${lost}`,
      );
      try {
        this.#onJournal([...this.#journaled]);
      } catch (err) {
        this.#log(`live journal: ${message(err)}`);
      }
    }
  }

  /**
   * Resets the fleet's live evidence of `question` (every question when
   * null) of the bundle served, of both tiers: the store bumps their reset
   * generations and forgets their records at once, every replica starts
   * them afresh; resolves once this replica has. Rejects when the store
   * cannot be reached (nothing reset).
   */
  async reset(question: string | null): Promise<void> {
    const s = this.#served;
    if (s === null) return;
    const names = question === null
      ? [...s.names]
      : s.names.filter((_, i) => s.tracks[i]!.question === question);
    await this.#store.reset(s.bundle, names);
    await this.sync();
  }

  /** The evidence pool of the bundle served (the store's epoch); "" before the first sync. */
  get epoch(): string {
    return this.#epoch;
  }

  /** Whether the store answers. */
  get link(): FleetLink {
    return this.#link;
  }

  /**
   * Serves `table` (its decisions put in force in its serving `state`),
   * counting in `counters` (one certificate per question, the
   * controller's, at audit rate `auditRate`): certification is withheld
   * until the store is read, then the fleet's threshold applies. With
   * `semantic` (the second tier's certificates, null for a question
   * without one: the table is served with its second tier), each second
   * tier is pooled as a stream of its own, the table's certificates are
   * over the two-tier rule's calibration (as the controller's are), and
   * the evidence is another pool than without (`poolName`).
   */
  serve(
    table: Table,
    state: TableState,
    counters: readonly LiveCertificate[],
    auditRate: number,
    semantic?: readonly (LiveCertificate | null)[],
  ): void {
    if (this.#served?.table === table) return;
    this.#served = servedOf(table, state, counters, auditRate, semantic);
    // The audits and batches of another bundle belong to its evidence.
    this.#held = [];
    this.#unsent = [];
    this.#epoch = "";
    applyAll(this.#served);
    this.kick();
  }

  /** Subscribes to policy announcements, syncs until the store answers (for at most `FIRST_SYNC_MS`), then every `syncMs`. */
  async start(): Promise<void> {
    if (!this.#subscribed) {
      this.#subscribed = true;
      await this.#store.subscribe((bundle) => {
        if (bundle === this.#served?.bundle) this.kick();
      }).catch((e) => this.#log(`live store: cannot subscribe: ${message(e)}`));
    }
    // The connection may still be opening: try again until it answers.
    const end = performance.now() + FIRST_SYNC_MS;
    for (;;) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        this.sync(),
        new Promise<void>((r) =>
          timer = setTimeout(r, Math.max(0, end - performance.now()))
        ),
      ]);
      clearTimeout(timer);
      if (this.#link === "connected" || performance.now() >= end) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    if (this.#link !== "connected") {
      this.#log(
        `live store ${this.#store.description} does not answer: certification withheld until it does`,
      );
    }
    if (this.#timer === undefined) {
      const timer = setInterval(() => this.kick(), this.#syncMs);
      Deno.unrefTimer(timer);
      this.#timer = timer;
    }
  }

  /**
   * Stops syncing, after trying to deliver what was counted: syncs until
   * nothing waits for the store, for at most `boundMs` (`STOP_SYNC_MS`).
   * What is still undelivered then is `takeUndelivered`'s.
   */
  async stop(boundMs = STOP_SYNC_MS): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    const end = performance.now() + boundMs;
    for (;;) {
      const left = end - performance.now();
      if (left <= 0) break;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        this.sync(),
        new Promise<void>((r) => timer = setTimeout(r, left)),
      ]);
      clearTimeout(timer);
      if (!this.#waiting()) break;
      const pause = Math.min(200, end - performance.now());
      if (pause <= 0) break;
      await new Promise((r) => setTimeout(r, pause));
    }
  }

  /** Asks for a sync soon (one already running is followed by one more). */
  kick(): void {
    void this.sync();
  }

  /** Syncs now (after the one running, if any); settles when done, never rejects. */
  sync(): Promise<void> {
    this.#again = true;
    this.#running ??= this.#loop();
    return this.#running;
  }

  async #loop(): Promise<void> {
    try {
      while (this.#again || this.#queue.length > 0) {
        this.#again = false;
        try {
          // A journal first: its counts are older than anything here.
          await this.#replay();
        } catch {
          // Not answering: the step below finds it so too, and says so.
        }
        try {
          await this.#step();
        } catch (e) {
          this.#log(`live store: ${message(e)}`);
        }
      }
    } finally {
      // At once, in the turn that found nothing left: a later `sync` (an
      // audit queued by `submit`) starts a new loop rather than joining
      // this finished one (it would wait for the next timed sync).
      this.#running = null;
    }
  }

  /**
   * True when the second tier of question `slot` is pooled here (the table
   * served with its second tier, and the question has one).
   */
  hasSemantic(slot: number): boolean {
    return (this.#served?.semanticTrack[slot] ?? -1) >= 0;
  }

  /**
   * The evidence one audit adds to question `slot` (its second tier's when
   * `semantic`; throws `RangeError` when that is not pooled, see
   * `hasSemantic`): an audit of an answer at `confidence`, with the model
   * disagreeing when `wrong`; `tag` names it across the fleet for `ttlMs`.
   * With `kind` "feedback", the same for feedback on an uncertified answer
   * by its decision id: the store counts it once across the fleet.
   */
  stage(
    slot: number,
    confidence: number,
    wrong: boolean,
    tag: string,
    ttlMs: number,
    semantic = false,
    kind: "audit" | "feedback" = "audit",
  ): StagedAudit {
    const s = this.#served!;
    const track = semantic ? (s.semanticTrack[slot] ?? -1) : slot;
    if (track < 0) {
      throw new RangeError(
        `Question ${slot} has no second tier pooled in this fleet`,
      );
    }
    const scratch = s.scratch[track]!;
    if (kind === "audit") scratch.recordAudit(confidence, wrong);
    else scratch.recordFeedback(confidence, wrong);
    const evidence = scratch.takeEvidence();
    return {
      stored: {
        id: tag,
        ttlMs: Math.max(1000, Math.round(ttlMs)),
        question: track,
        fields: evidenceFields(evidence),
      },
      evidence,
    };
  }

  /**
   * Counts `audits` in the store (in the next sync, with whatever else is
   * waiting); per audit, whether it was counted, answered already, or given
   * in evidence the fleet no longer has. While the store is unreachable,
   * audits are counted here and sent later: `counted`.
   */
  submit(audits: readonly StagedAudit[]): Promise<AuditOutcome[]> {
    if (audits.length === 0) return Promise.resolve([]);
    // A value the store cannot take would fail the whole sync: never send one.
    const bad = audits.map((a) => !storableAudit(a.stored));
    if (bad.some((b) => b)) {
      const good = audits.filter((_, i) => !bad[i]);
      return this.submit(good).then((outcomes) => {
        let at = 0;
        return bad.map((b): AuditOutcome => b ? "malformed" : outcomes[at++]!);
      });
    }
    return new Promise((resolve) => {
      this.#queue.push({ audits, resolve });
      void this.sync();
    });
  }

  async #step(): Promise<void> {
    const s = this.#served;
    const waiters = this.#queue.splice(0);
    if (s === null) {
      for (const w of waiters) w.resolve(w.audits.map(() => "not_shared"));
      return;
    }
    const joining = this.#epoch === "";
    // Until the epoch is known, nothing is sent: counts wait.
    const taken = joining
      ? s.counters.map((c) => emptyEvidence(c.thresholds.length))
      : s.counters.map((c) => c.takeEvidence());
    const held = joining ? [] : this.#held;
    const fresh = waiters.flatMap((w) => w.audits);
    const audits = [...held, ...fresh];
    const batch: Batch = {
      id: randomHex8() + randomHex8(),
      adds: taken.map(evidenceFields),
      audits: audits.map((a) => a.stored),
    };
    const sending = joining ? [] : [...this.#unsent.map((u) => u.batch), batch];
    this.#inFlight = joining
      ? { batch: null, audits: [...this.#held, ...fresh] }
      : { batch, audits };
    let reply;
    try {
      reply = await this.#store.sync({
        bundle: s.bundle,
        epoch: this.#epoch,
        proposal: randomHex8(),
        questions: s.names,
        generations: s.generations,
        batches: sending,
      });
    } catch (e) {
      this.#inFlight = null;
      if (e instanceof StoreRejected && !joining) {
        this.#rejected(s, e, taken, held.length + fresh.length, sending.length);
        for (const w of waiters) w.resolve(w.audits.map(() => "store_error"));
        return;
      }
      if (!joining) {
        if (e instanceof StoreReplyLost) {
          // It may have been applied: send it again as it is.
          this.#unsent.push({
            batch,
            evidence: taken.map((t, i) =>
              audits.reduce(
                (sum, a) =>
                  a.stored.question === i ? addEvidence(sum, a.evidence) : sum,
                t,
              )
            ),
          });
          this.#held = [];
        } else {
          // Not sent: the counts go back to wait for the next batch.
          s.counters.forEach((c, i) =>
            c.restore(addEvidence(c.evidence(), taken[i]!))
          );
          this.#held = audits;
        }
      } else this.#held = [...this.#held, ...fresh];
      this.#failures++;
      this.#unreachable(s, e);
      for (const w of waiters) w.resolve(w.audits.map(() => "counted"));
      return;
    }
    this.#inFlight = null;
    if (this.#served !== s) {
      for (const w of waiters) w.resolve(w.audits.map(() => "not_shared"));
      return;
    }
    this.#syncs++;
    this.#lastSync = performance.now();
    if (this.#link !== "connected") {
      if (this.#link === "unreachable") {
        this.#log(
          `live store ${this.#store.description} answers again: the fleet's threshold applies`,
        );
      }
      this.#link = "connected";
    }
    let outcomes: AuditOutcome[];
    if (reply.epoch !== this.#epoch) {
      if (this.#epoch !== "") {
        this.#log(
          `live store ${this.#store.description} lost the evidence of bundle ${
            s.bundle.slice(0, 16)
          }: its live certificate starts afresh (epoch ${reply.epoch})`,
        );
      }
      this.#epoch = reply.epoch;
      this.#unsent = [];
      this.#held = [];
      outcomes = fresh.map(() => "not_shared");
      // Counts are sent in the next sync, under the epoch now known.
      this.#again = true;
    } else {
      this.#unsent = [];
      this.#held = [];
      const mine = reply.audits[reply.audits.length - 1] ?? [];
      outcomes = mine.slice(held.length);
    }
    let at = 0;
    for (const w of waiters) {
      w.resolve(w.audits.map(() => outcomes[at++] ?? "counted"));
    }
    // A question whose reset generation moved starts afresh here (both
    // tiers: a reset always moves both).
    const reset: string[] = [];
    reply.generations.forEach((g, i) => {
      if (s.generations[i] !== -1 && s.generations[i] !== g) {
        const name = s.tracks[i]!.question;
        if (!reset.includes(name)) reset.push(name);
        s.applied[i] = { ...s.initial[i]! };
      }
      s.generations[i] = g;
    });
    if (reset.length > 0) {
      this.#log(
        `live store ${this.#store.description}: the live evidence of ${
          reset.map((n) => `"${n}"`).join(", ")
        } was reset; starting afresh`,
      );
      try {
        this.#onReset(s.table, reset);
      } catch (e) {
        this.#log(`live store: resetting the counters here: ${message(e)}`);
      }
    }
    s.pooled = reply.records.map((r, i) => {
      const k = s.views[i]!.thresholds.length;
      return { evidence: recordEvidence(r, k), ...recordPolicy(r) };
    });
    await this.#decide(s);
  }

  /** Weighs the pooled evidence of every question and moves the fleet's policy when it says so. */
  async #decide(s: Served): Promise<void> {
    for (let i = 0; i < s.names.length; i++) {
      const pooled = s.pooled[i]!;
      const current = pooled.policy ?? s.initial[i]!;
      const view = s.views[i]!;
      view.restore(pooled.evidence, current);
      view.decide();
      const next = view.policy();
      if (
        next.floor !== current.floor || next.inForce !== current.inForce ||
        (next.alarms ?? 0) !== (current.alarms ?? 0)
      ) {
        let set = false;
        try {
          set = await this.#store.setPolicy(
            s.bundle,
            this.#epoch,
            s.names[i]!,
            pooled.version,
            next,
            s.generations[i]!,
          );
        } catch (e) {
          if (e instanceof StoreRejected) {
            // Refused, not raced: asking again at once would spin. The next
            // timed sync weighs the evidence again.
            this.#rejectedSyncs++;
            this.#log(
              `live store ${this.#store.description} refused a policy change of ${
                s.names[i]
              } (${message(e)}); the link stays up`,
            );
            // Here, only the stricter of the two applies (as while unreachable).
            s.applied[i] = {
              floor: Math.min(current.floor, next.floor),
              inForce: Math.min(current.inForce, next.inForce),
            };
            continue;
          }
          set = false;
        }
        if (set) {
          pooled.policy = next;
          pooled.version++;
        } else this.#again = true; // moved by another replica first: read it
      }
      s.applied[i] = { ...(pooled.policy ?? s.initial[i]!) };
    }
    applyAll(s);
  }

  /**
   * The store refused a sync (`StoreRejected`): nothing of it was applied.
   * Its audits and any batch sent again are given up (sent again, they
   * would be refused again and hold every later count back); the counts of
   * decisions go back to wait for the next batch unless they were all the
   * sync carried. Logged once per refusal; the link stays up.
   */
  #rejected(
    s: Served,
    e: StoreRejected,
    taken: readonly LiveEvidence[],
    audits: number,
    resent: number,
  ): void {
    const retry = audits > 0 || resent > 1;
    if (retry) {
      s.counters.forEach((c, i) =>
        c.restore(addEvidence(c.evidence(), taken[i]!))
      );
      this.#again = true;
    }
    this.#held = [];
    this.#unsent = [];
    this.#rejectedSyncs++;
    this.#rejectedAudits += audits;
    this.#log(
      `live store ${this.#store.description} refused a sync (${
        message(e)
      }): ${audits} audit(s) and ${
        Math.max(0, resent - 1)
      } earlier batch(es) given up, ${
        retry ? "decision counts sent again" : "its decision counts dropped"
      }; the link stays up`,
    );
  }

  /** The store did not answer: keep the fleet's threshold, move only stricter on local evidence. */
  #unreachable(s: Served, e: unknown): void {
    if (this.#link === "connected") {
      this.#log(
        `live store ${this.#store.description} unreachable (${
          message(e)
        }): keeping the fleet's threshold, moving only stricter on local evidence until it answers`,
      );
    }
    this.#link = "unreachable";
    for (let i = 0; i < s.names.length; i++) {
      const pooled = s.pooled[i];
      if (pooled === null || pooled === undefined) continue; // withheld until read
      const fleet = pooled.policy ?? s.initial[i]!;
      const view = s.views[i]!;
      view.restore(this.#localEvidence(s, i, pooled), fleet);
      view.decide();
      const local = view.policy();
      s.applied[i] = {
        floor: Math.min(fleet.floor, local.floor),
        inForce: Math.min(fleet.inForce, local.inForce),
        alarms: (fleet.alarms ?? 0) | (local.alarms ?? 0),
      };
    }
    applyAll(s);
  }

  /** The pooled evidence last read plus everything this replica counted since. */
  #localEvidence(s: Served, i: number, pooled: Pooled): LiveEvidence {
    let e = addEvidence(pooled.evidence, s.counters[i]!.evidence());
    for (const u of this.#unsent) e = addEvidence(e, u.evidence[i]!);
    for (const a of this.#held) {
      if (a.stored.question === i) e = addEvidence(e, a.evidence);
    }
    return e;
  }

  /**
   * The decision in force on this replica for question `slot` of the table
   * served (its second tier's when `semantic`; null when not pooled).
   */
  decision(slot: number, semantic = false): LiveDecision | null {
    const s = this.#served;
    if (s === null) return null;
    const track = semantic ? (s.semanticTrack[slot] ?? -1) : slot;
    const view = s.display[track];
    if (view === undefined) return null;
    view.restore(emptyEvidence(view.thresholds.length), s.applied[track]);
    return view.current();
  }

  /**
   * The second tier's threshold in force on this replica for question
   * `slot` of `table` (null: withdrawn, or withheld until the store is
   * read); undefined when its second tier is not pooled here.
   */
  semanticThreshold(table: Table, slot: number): number | null | undefined {
    const s = this.#served;
    if (s === null || s.table !== table || !this.hasSemantic(slot)) {
      return undefined;
    }
    return s.semanticThresholds[slot] ?? null;
  }

  /** The live state of every question of `table` (empty unless served): the pooled evidence with what this replica counted since, under the policy in force here. */
  states(table: Table): Map<string, LiveState> {
    return this.#states(table, "table");
  }

  /** The same as `states`, of the second tiers pooled (by question name). */
  semanticStates(table: Table): Map<string, LiveState> {
    return this.#states(table, "semantic");
  }

  #states(table: Table, tier: FleetTrack["tier"]): Map<string, LiveState> {
    const out = new Map<string, LiveState>();
    const s = this.#served;
    if (s === null || s.table !== table) return out;
    s.tracks.forEach((t, i) => {
      if (t.tier !== tier) return;
      const name = t.question;
      const view = s.display[i]!;
      const pooled = s.pooled[i];
      const evidence = pooled === null || pooled === undefined
        ? s.counters[i]!.evidence()
        : this.#localEvidence(s, i, pooled);
      view.restore(evidence, s.applied[i]);
      out.set(name, view.state(false));
    });
    return out;
  }

  /** Where the fleet stands, for statistics. */
  status(): FleetStatus {
    return {
      replica: this.#replica,
      store: this.#store.description,
      link: this.#link,
      epoch: this.#epoch,
      lastSyncAgoMs: this.#lastSync === null
        ? null
        : Math.round(performance.now() - this.#lastSync),
      syncs: this.#syncs,
      failures: this.#failures,
      waitingAudits: this.#held.length +
        this.#unsent.reduce((n, u) => n + u.batch.audits.length, 0),
      waitingBatches: this.#unsent.length,
      rejectedSyncs: this.#rejectedSyncs,
      rejectedAudits: this.#rejectedAudits,
      journalAudits: journalAudits(this.#journaled),
    };
  }
}

/** True when `e` counts anything. */
function hasEvidence(e: LiveEvidence): boolean {
  return e.audited > 0 || e.feedback > 0 || e.uncertified > 0 ||
    e.agreed.some((n) => n > 0) || e.labelled.some((n) => n > 0) ||
    e.auditDisagreed.some((n) => n > 0) ||
    e.feedbackDisagreed.some((n) => n > 0);
}

/** True when every number of `a` is one a store takes: whole, finite; a positive lifetime. */
function storableAudit(a: StoredAudit): boolean {
  return Number.isSafeInteger(a.ttlMs) && a.ttlMs > 0 &&
    Number.isSafeInteger(a.question) && a.question >= 0 &&
    a.fields.every(([f, n]) => f !== "" && Number.isSafeInteger(n));
}

function message(e: unknown): string {
  return (e as Error)?.message ?? String(e);
}
