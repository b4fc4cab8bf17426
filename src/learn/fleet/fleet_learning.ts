/**
 * A fleet that learns (`serve --learn DIR --live-store URL` on every
 * replica), as one replica runs it:
 *
 * - what the replica writes for learning (feedback, ledger and pick lines,
 *   retrain records) goes to the fleet's pool through its outbox
 *   (`outbox.ts`), and every replica reads the pool into its own folder
 *   (`pool_reader.ts`), so each holds the fleet's log;
 * - one replica at a time learns: the one holding the store's lease
 *   (renewed every `LEASE_RENEW_MS` for `LEASE_TTL_MS`). A replica that
 *   takes the lease first reads the whole pool, then resumes a learner
 *   from its folder (`readResume`: the labels, the retrains and the tests
 *   every learner before it spent), counts every pooled label from then
 *   on, and publishes each bundle through the store under its fence before
 *   serving it: a learner whose lease expired (stopped, paused, cut off)
 *   publishes nothing, and a replica that finds its lease past its own
 *   deadline stops learning before the store could give it to another;
 * - every replica serves the bundle the store says is in force
 *   (`bundle_follower.ts`), and shows the learner's status, which the
 *   learner writes to the store every second.
 *
 * @module
 */

import type { Table } from "../../engine/mod.ts";
import type { LearnStats } from "../../openapi/mod.ts";
import type { LearnStore, PooledChunk } from "../../live/mod.ts";
import { bundleIdOf, randomHex8 } from "../../live/mod.ts";
import type { Learner, StretchPoint } from "../learner.ts";
import { QuestionRegistry } from "../questions.ts";
import { type LearnerResume, readResume } from "../resume.ts";
import { LEARN_FILES } from "../retrain.ts";
import { BundleFollower } from "./bundle_follower.ts";
import { packBundle } from "./bundle_share.ts";
import type { Outbox } from "./outbox.ts";
import type { PoolReader } from "./pool_reader.ts";
import { ReplicaCounts } from "./replica_counts.ts";

/** How long a lease lasts unless renewed, ms. */
export const LEASE_TTL_MS = 5_000;
/** How often the lease is renewed (or tried for), ms. */
export const LEASE_RENEW_MS = 1_000;
/** A learner's status older than this is not shown as current, ms. */
const STATUS_STALE_MS = 30_000;

/** What a learner is made with, by the replica that takes the lease. */
export interface LearnerHooks {
  resume: LearnerResume;
  /** The registry every replica counts pooled labels into. */
  registry: QuestionRegistry;
  /** Where the learner's retrain records go (the outbox, then the pool). */
  writeHistory: (line: string) => Promise<void>;
  /** Publishes `DIR/bundle` under the lease and serves it; false when the lease is lost (not served). */
  swapIn: () => Promise<boolean>;
}

/** What a fleet's learning is told. */
export interface FleetLearningOptions {
  dir: string;
  replica: string;
  store: LearnStore;
  outbox: Outbox;
  pool: PoolReader;
  /** Versions of `DIR/bundle` kept here and in the store. */
  keep: number;
  /** The table served now. */
  served: () => Table;
  /** Serves `DIR/bundle` again. */
  reload: () => Promise<void>;
  /** Makes this replica's learner once it holds the lease. */
  makeLearner: (hooks: LearnerHooks) => Learner;
  /** Marks a question held (or no longer) on the table served. */
  optionsAdded: (question: string, added: boolean) => void;
  /** True when the learner should retrain at once (seed traces, nothing learned). */
  retrainAtOnce?: () => boolean;
  log?: ((line: string) => void) | undefined;
}

/** What a learner writes to the store every second. */
interface Status {
  replica: string;
  fence: number;
  at: number;
  calibrate_after: Record<string, number>;
  stats: LearnStats;
}

/** A fleet's learning on one replica (see the module doc). */
export class FleetLearning {
  readonly registry = new QuestionRegistry();
  readonly #o: FleetLearningOptions;
  readonly #log: (line: string) => void;
  readonly #holder: string;
  readonly bundles: BundleFollower;
  readonly #counts = new ReplicaCounts();
  #learner: Learner | null = null;
  #fence = 0;
  /** performance.now() past which this replica may no longer act as the learner. */
  #deadline = -Infinity;
  #becoming: Promise<void> | null = null;
  #leaseHolder: string | null = null;
  #timer: ReturnType<typeof setInterval> | undefined;
  #statusTimer: ReturnType<typeof setInterval> | undefined;
  #status: Status | null = null;
  #heldHere = new Set<string>();
  #changesWritten = "";
  #closed = false;
  #terms = 0;

  /** A fleet's learning; nothing runs before `start`. */
  constructor(options: FleetLearningOptions) {
    this.#o = options;
    this.#log = options.log ?? ((l) => console.error(l));
    this.#holder = `${options.replica}#${randomHex8()}`;
    this.bundles = new BundleFollower({
      dir: options.dir,
      store: options.store,
      keep: options.keep,
      servedId: () => bundleIdOf(options.served()),
      // A new table starts with no question held: the learner's holds are
      // put on it again from its status.
      reload: async () => {
        await options.reload();
        if (this.#learner === null) {
          this.#heldHere.clear();
          void this.#statusTick();
        }
      },
      log: this.#log,
    });
  }

  /** True while this replica is the fleet's learner. */
  get learning(): boolean {
    return this.#learner !== null;
  }

  /** The learner of this replica (null: another replica learns). */
  get learner(): Learner | null {
    return this.#learner;
  }

  /**
   * A label this replica took: counted once the pool brings it back (by
   * whichever replica learns then), so never here.
   */
  observe(
    _question: string,
    _answer: string | boolean,
    _table: Table,
    _backed?: boolean,
  ): void {}

  /** Told every pooled batch once it is in the folder (see `PoolReader`). */
  onChunks(chunks: readonly PooledChunk[]): void {
    const table = this.#o.served();
    for (const c of chunks) {
      if (c.kind !== "log") continue;
      for (const line of c.text.split("\n")) {
        if (line === "") continue;
        const label = this.#counts.line(c.replica, line);
        if (label === null) continue;
        for (const [question, answer] of label.answers) {
          if (this.#learner !== null) {
            this.#learner.observe(question, answer, table, label.backed);
          } else if (!table.byName.has(question)) {
            this.registry.observe(question, answer);
          }
        }
      }
    }
    for (const p of this.#counts.takeStretches()) {
      this.#learner?.addStretch(p);
    }
  }

  /** Joins the fleet: reads the pool and the bundle in force, then tries for the lease every `LEASE_RENEW_MS`. */
  async start(): Promise<void> {
    await this.#o.pool.catchUp().catch(() => {});
    this.#o.pool.start();
    await this.bundles.start();
    await this.bundles.kick();
    await this.#tick();
    this.#timer = setInterval(() => void this.#tick(), LEASE_RENEW_MS);
    Deno.unrefTimer(this.#timer);
    this.#statusTimer = setInterval(() => void this.#statusTick(), 1_000);
    Deno.unrefTimer(this.#statusTimer);
  }

  async #tick(): Promise<void> {
    if (this.#closed) return;
    const sent = performance.now();
    try {
      const lease = await this.#o.store.lease(this.#holder, LEASE_TTL_MS);
      this.#leaseHolder = lease.holder;
      if (lease.held) {
        // The store's lease runs at least until sent + TTL: so does ours.
        if (this.#learner !== null && lease.fence !== this.#fence) {
          this.#stepDown("the store gave this replica a new lease");
        }
        this.#fence = lease.fence;
        this.#deadline = sent + LEASE_TTL_MS;
        if (this.#learner === null) this.#becoming ??= this.#become();
      } else if (this.#learner !== null) {
        this.#stepDown(`the lease is ${lease.holder}'s now`);
      }
    } catch {
      // The store does not answer: the lease runs out at its deadline.
    }
    if (this.#learner !== null && performance.now() >= this.#deadline) {
      this.#stepDown("its lease ran out (the store did not renew it)");
    }
  }

  async #become(): Promise<void> {
    try {
      // The whole pool first: the labels, and the retrains (and tests) of
      // every learner before.
      await this.#o.pool.catchUp();
      await this.bundles.kick();
      if (performance.now() >= this.#deadline || this.#closed) return;
      const resume = await readResume(this.#o.dir);
      for (const q of this.#heldHere) this.#o.optionsAdded(q, false);
      this.#heldHere.clear();
      const fence = this.#fence;
      this.#terms++;
      this.#learner = this.#o.makeLearner({
        resume,
        registry: this.registry,
        // Each record names the learner and the lease it ran under.
        writeHistory: (line) =>
          this.#o.outbox.append(
            "history",
            `${
              JSON.stringify({
                ...JSON.parse(line),
                learner: this.#o.replica,
                lease: fence,
              })
            }\n`,
          ),
        swapIn: () => this.#swapIn(fence),
      });
      for (const p of this.#counts.series()) this.#learner.addStretch(p);
      this.#log(
        `learn: this replica (${this.#o.replica}) is the fleet's learner now (lease ${fence}), resuming from ${resume.labels} pooled labels and ${resume.retrains} retrains`,
      );
      void this.#statusTick();
      if (this.#o.retrainAtOnce?.() === true) {
        void this.#learner.retrainNow();
      }
    } catch (e) {
      this.#log(
        `learn: cannot take over as the fleet's learner yet: ${
          (e as Error)?.message ?? e
        }`,
      );
    } finally {
      this.#becoming = null;
    }
  }

  #stepDown(why: string): void {
    const l = this.#learner;
    if (l === null) return;
    this.#learner = null;
    l.close();
    this.#log(`learn: this replica stops learning: ${why}`);
  }

  /** Publishes `DIR/bundle` under lease `fence`, then serves it; false (not served) when the store refuses. */
  async #swapIn(fence: number): Promise<boolean> {
    const dir = `${this.#o.dir}/${LEARN_FILES.bundle}`;
    let published = null;
    try {
      if (fence !== this.#fence || performance.now() >= this.#deadline) {
        throw new Error("the lease it was written under ran out");
      }
      const packed = await packBundle(dir);
      published = await this.#o.store.publish(
        this.#holder,
        fence,
        {
          id: packed.id,
          sha256: packed.sha256,
          bytes: packed.blob.length,
          replica: this.#o.replica,
        },
        packed.blob,
        this.#o.keep,
      );
      if (published === null) {
        throw new Error("the store says the lease is no longer this replica's");
      }
    } catch (e) {
      this.#log(
        `learn: the new bundle is not served: ${
          (e as Error)?.message ?? e
        }; this replica serves the fleet's bundle`,
      );
      this.bundles.forget();
      return false;
    }
    await this.#o.reload();
    this.bundles.published(published);
    return true;
  }

  /** The learner writes its status; another replica reads it and applies its holds. */
  async #statusTick(): Promise<void> {
    const l = this.#learner;
    try {
      if (l !== null) {
        const status: Status = {
          replica: this.#o.replica,
          fence: this.#fence,
          at: Date.now(),
          calibrate_after: l.calibrateAfter(),
          stats: l.stats() as LearnStats,
        };
        this.#status = status;
        await this.#o.store.putStatus(
          this.#holder,
          this.#fence,
          JSON.stringify(status),
        );
        return;
      }
      const raw = await this.#o.store.status();
      if (raw === null) return;
      const status = JSON.parse(raw) as Status;
      this.#status = status;
      if (this.#learner !== null) return;
      const held = new Set(status.stats?.held ?? []);
      for (const q of held) {
        if (!this.#heldHere.has(q)) this.#o.optionsAdded(q, true);
      }
      for (const q of this.#heldHere) {
        if (!held.has(q)) this.#o.optionsAdded(q, false);
      }
      this.#heldHere = held;
      // So that a takeover calibrates as the learner before did.
      const changes = JSON.stringify(status.calibrate_after ?? {});
      if (changes !== this.#changesWritten && changes !== "{}") {
        const path = `${this.#o.dir}/${LEARN_FILES.changes}`;
        await Deno.writeTextFile(`${path}.tmp`, changes);
        await Deno.rename(`${path}.tmp`, path);
        this.#changesWritten = changes;
      }
    } catch {
      // The store does not answer: the status shown stays the last read.
    }
  }

  /** The `learn` section of `/v1/stats`: the learner's own, or the one it last wrote to the store. */
  stats(): LearnStats {
    const l = this.#learner;
    const status = this.#status;
    const fresh = status !== null && Date.now() - status.at < STATUS_STALE_MS;
    // A status gone stale (the store away, a takeover) still says what
    // the learner last knew; only its name is withheld.
    const base: LearnStats = l !== null
      ? l.stats() as LearnStats
      : status !== null
      ? { ...status.stats, dir: this.#o.dir, running: false }
      : emptyStats(this.#o.dir);
    const applied = this.bundles.applied;
    return {
      ...base,
      learner: l !== null,
      fleet: {
        replica: this.#o.replica,
        learner: l !== null ? this.#o.replica : fresh ? status!.replica : null,
        lease: l !== null ? this.#fence : status?.fence ?? null,
        learner_status_age_s: l !== null || status === null
          ? 0
          : Math.round((Date.now() - status.at) / 1000),
        terms_here: this.#terms,
        pool: {
          read: this.#o.pool.read,
          last: this.#o.pool.after,
          reachable: this.#o.pool.reachable,
        },
        outbox: {
          waiting: this.#o.outbox.waiting,
          shipped: this.#o.outbox.shipped,
        },
        bundle: applied === null ? null : {
          id: applied.id,
          version: applied.version,
          fence: applied.fence,
          replica: applied.replica,
          published: applied.published,
        },
        bundle_swaps: this.bundles.swaps,
        replicas: this.#counts.perReplica(),
      },
    };
  }

  /** Stops learning and looking (gives the lease up, so another replica takes over at once). */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    clearInterval(this.#statusTimer);
    this.bundles.stop();
    await this.#becoming;
    if (this.#learner !== null) {
      this.#stepDown("it stops");
      await this.#o.store.release(this.#holder, this.#fence).catch(() => {});
    }
  }
}

/** The `learn` section before any learner wrote a status. */
function emptyStats(dir: string): LearnStats {
  return {
    dir,
    labels: 0,
    next_retrain_at: 0,
    labels_per_s: 0,
    next_retrain_in_s: null,
    advice: {},
    running: false,
    retrains: 0,
    swaps: 0,
    held: [],
    unlearned: [],
    tests: {},
    history: [],
    series: [],
  };
}

/** For `Learner`'s series: the points a fleet's pooled ledger makes. */
export type { StretchPoint };
