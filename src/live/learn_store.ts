/**
 * Where a fleet that learns (`serve --learn DIR --live-store URL` on every
 * replica) pools what it learns from and shares what it learned: the
 * contract every store keeps, and an in-memory store with the same
 * semantics (for tests; `redis_learn_store.ts` is the real one).
 *
 * - **The pool**: one append-only log of chunks (a Redis stream). A chunk
 *   is what one replica wrote at once: the lines of one feedback request or
 *   of one ledger flush (`log`), or one retrain record (`history`). Each
 *   chunk carries its source (the outbox it came from, `outbox.ts`) and its
 *   number there; the store appends a chunk only when its number is above
 *   the last one it holds of that source, atomically, so a chunk sent again
 *   after a lost reply (or replayed after a restart) is in the pool once.
 *   Every replica reads the pool from where it stopped (`read`). The pool
 *   keeps about `POOL_MAX_CHUNKS`; older chunks are dropped (a replica
 *   that reads after them is told how many it missed).
 * - **The lease**: one key names the replica that learns (`lease`), for
 *   `ttlMs` unless renewed; each new holder gets a fence number one above
 *   the last. Only the holder with its fence can publish a bundle or the
 *   learner's status, so a learner whose lease expired (paused, cut off)
 *   can write nothing every replica would act on.
 * - **The bundles**: a published bundle is its files in one text (`blob`)
 *   with its id, checksum, size, the fence it was written under and a
 *   version number that grows with every change of the bundle in force
 *   (`current`); the last `keep` are kept (`versions`), and `rollback`
 *   makes one of them the bundle in force again, for every replica.
 *   Publishing and rolling back announce themselves (`subscribe`).
 * - **The key** replicas sign decision ids with (`sharedKey`: the first
 *   replica's proposal), and the learner's status (`putStatus`, fenced).
 *
 * @module
 */

/** About how many chunks the pool keeps; older ones are dropped. */
export const POOL_MAX_CHUNKS = 500_000;

/** What a chunk holds: feedback-log lines (feedback, ledger, picks) or one retrain record. */
export type ChunkKind = "log" | "history";

/** A chunk as its replica hands it to the pool. */
export interface Chunk {
  /** Its number in its source (1, 2, ...). */
  readonly seq: number;
  readonly kind: ChunkKind;
  /** Whole lines, newline-terminated. */
  readonly text: string;
}

/** A chunk as the pool holds it. */
export interface PooledChunk extends Chunk {
  /** Its place in the pool (ids grow; compare with `poolIdBefore`). */
  readonly id: string;
  /** The outbox it came from. */
  readonly source: string;
  /** The replica that wrote it. */
  readonly replica: string;
}

/** What `read` answers. */
export interface PoolRead {
  readonly chunks: PooledChunk[];
  /** The oldest id the pool still holds (null: empty): after a gap, chunks were dropped unread. */
  readonly first: string | null;
}

/** The lease as a `lease` call left it. */
export interface Lease {
  /** True when the caller holds it now (taken or renewed). */
  readonly held: boolean;
  /** Who holds it (null: nobody). */
  readonly holder: string | null;
  /** The holder's fence number (0: nobody has ever held it). */
  readonly fence: number;
}

/** A bundle as the store publishes it. */
export interface PublishedBundle {
  /** Grows with every change of the bundle in force (publish or rollback). */
  readonly version: number;
  /** The bundle id (`bundleIdOf`, 16 hex digits). */
  readonly id: string;
  /** SHA-256 of its blob, hex. */
  readonly sha256: string;
  /** Characters of its blob. */
  readonly bytes: number;
  /** The fence of the lease it was written under. */
  readonly fence: number;
  /** The replica that wrote it. */
  readonly replica: string;
  /** When it was published (ISO 8601). */
  readonly published: string;
  /** True when a rollback made it the bundle in force again. */
  readonly rollback?: boolean;
}

/** The fleet learning's store (see the module doc). */
export interface LearnStore {
  /** Where it is, in words (no password). */
  readonly description: string;
  /** Appends the chunks of `source` numbered above the last it holds; resolves to its last number after. */
  append(
    source: string,
    replica: string,
    chunks: readonly Chunk[],
  ): Promise<number>;
  /** The last chunk number of `source` the pool holds (0: none). */
  shipped(source: string): Promise<number>;
  /** At most `count` chunks after id `after` ("0-0": from the start). */
  read(after: string, count: number): Promise<PoolRead>;
  /** Takes the lease for `holder`, or renews it when `holder` has it, for `ttlMs`. */
  lease(holder: string, ttlMs: number): Promise<Lease>;
  /** Gives the lease up when `holder` holds it under `fence`. */
  release(holder: string, fence: number): Promise<void>;
  /**
   * Publishes a bundle written by `holder` under `fence` and makes it the
   * bundle in force, keeping the last `keep`; null (nothing written) unless
   * `holder` holds the lease under `fence` now.
   */
  publish(
    holder: string,
    fence: number,
    bundle: Omit<PublishedBundle, "version" | "fence" | "published">,
    blob: string,
    keep: number,
  ): Promise<PublishedBundle | null>;
  /** The bundle in force (null: none published). */
  current(): Promise<PublishedBundle | null>;
  /** A kept bundle's blob (null: not kept). */
  blob(id: string): Promise<string | null>;
  /** The bundles kept, newest first. */
  versions(): Promise<PublishedBundle[]>;
  /** Makes kept bundle `id` the bundle in force (null: not kept). */
  rollback(id: string): Promise<PublishedBundle | null>;
  /** Sets the learner's status (JSON) when `holder` holds the lease under `fence`; false otherwise. */
  putStatus(holder: string, fence: number, json: string): Promise<boolean>;
  /** The learner's status last set (null: none). */
  status(): Promise<string | null>;
  /** The fleet's decision-id key: the one set first, `proposal` when none was. */
  sharedKey(proposal: string): Promise<string>;
  /** Calls `onBundle` whenever the bundle in force changes. */
  subscribe(onBundle: () => void): Promise<void>;
  /** Closes the connections. */
  close(): Promise<void>;
}

/**
 * True when pool id `a` comes before `b` (ids are `MS-SEQ`, as a Redis
 * stream's).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { poolIdBefore } from "./learn_store.ts";
 * assert.equal(poolIdBefore("9-5", "10-0"), true);
 * assert.equal(poolIdBefore("10-1", "10-0"), false);
 * ```
 */
export function poolIdBefore(a: string, b: string): boolean {
  const [am = 0, as = 0] = a.split("-").map(Number);
  const [bm = 0, bs = 0] = b.split("-").map(Number);
  return am < bm || (am === bm && as < bs);
}

/**
 * A learning store in this process's memory (see the module doc): several
 * replicas sharing one stand for replicas sharing a Redis server. `down =
 * true` makes every call reject, as an unreachable store does. Leases run
 * on the clock `now`.
 */
export class MemoryLearnStore implements LearnStore {
  readonly description = "memory";
  /** When true, every call rejects (an unreachable store). */
  down = false;
  readonly #now: () => number;
  readonly #maxChunks: number;
  readonly #pool: PooledChunk[] = [];
  #nextId = 1;
  readonly #last = new Map<string, number>();
  #lease: { holder: string; fence: number; until: number } | null = null;
  #fence = 0;
  #version = 0;
  #current: PublishedBundle | null = null;
  readonly #kept: { meta: PublishedBundle; blob: string }[] = [];
  #status: string | null = null;
  #key: string | null = null;
  readonly #listeners: (() => void)[] = [];

  /** A store on the clock `now` (ms; `Date.now` by default), keeping about `maxChunks`. */
  constructor(now: () => number = Date.now, maxChunks = POOL_MAX_CHUNKS) {
    this.#now = now;
    this.#maxChunks = maxChunks;
  }

  #ready<T>(f: () => T): Promise<T> {
    if (this.down) return Promise.reject(new Error("store unreachable (down)"));
    try {
      return Promise.resolve(f());
    } catch (e) {
      return Promise.reject(e);
    }
  }

  #holds(holder: string, fence: number): boolean {
    const l = this.#lease;
    return l !== null && l.until > this.#now() && l.holder === holder &&
      l.fence === fence;
  }

  #announce(): void {
    for (const f of this.#listeners) queueMicrotask(f);
  }

  append(source: string, replica: string, chunks: readonly Chunk[]) {
    return this.#ready(() => {
      let last = this.#last.get(source) ?? 0;
      for (const c of chunks) {
        if (c.seq <= last) continue;
        this.#pool.push({ ...c, id: `${this.#nextId++}-0`, source, replica });
        last = c.seq;
      }
      this.#last.set(source, last);
      if (this.#pool.length > this.#maxChunks) {
        this.#pool.splice(0, this.#pool.length - this.#maxChunks);
      }
      return last;
    });
  }

  shipped(source: string) {
    return this.#ready(() => this.#last.get(source) ?? 0);
  }

  read(after: string, count: number) {
    return this.#ready((): PoolRead => ({
      chunks: this.#pool.filter((c) => poolIdBefore(after, c.id)).slice(
        0,
        count,
      ),
      first: this.#pool[0]?.id ?? null,
    }));
  }

  lease(holder: string, ttlMs: number) {
    return this.#ready((): Lease => {
      const now = this.#now();
      const l = this.#lease;
      if (l !== null && l.until > now) {
        if (l.holder !== holder) {
          return { held: false, holder: l.holder, fence: l.fence };
        }
        l.until = now + ttlMs;
        return { held: true, holder, fence: l.fence };
      }
      this.#lease = { holder, fence: ++this.#fence, until: now + ttlMs };
      return { held: true, holder, fence: this.#fence };
    });
  }

  release(holder: string, fence: number) {
    return this.#ready(() => {
      if (this.#holds(holder, fence)) this.#lease = null;
    });
  }

  publish(
    holder: string,
    fence: number,
    bundle: Omit<PublishedBundle, "version" | "fence" | "published">,
    blob: string,
    keep: number,
  ) {
    return this.#ready((): PublishedBundle | null => {
      if (!this.#holds(holder, fence)) return null;
      const meta: PublishedBundle = {
        ...bundle,
        version: ++this.#version,
        fence,
        published: new Date(this.#now()).toISOString(),
      };
      const at = this.#kept.findIndex((k) => k.meta.id === bundle.id);
      if (at >= 0) this.#kept.splice(at, 1);
      this.#kept.unshift({ meta, blob });
      this.#kept.splice(Math.max(1, keep));
      this.#current = meta;
      this.#announce();
      return meta;
    });
  }

  current() {
    return this.#ready(() => this.#current);
  }

  blob(id: string) {
    return this.#ready(() =>
      this.#kept.find((k) => k.meta.id === id)?.blob ?? null
    );
  }

  versions() {
    return this.#ready(() => this.#kept.map((k) => k.meta));
  }

  rollback(id: string) {
    return this.#ready((): PublishedBundle | null => {
      const k = this.#kept.find((k) => k.meta.id === id);
      if (k === undefined) return null;
      this.#current = {
        ...k.meta,
        version: ++this.#version,
        rollback: true,
        published: new Date(this.#now()).toISOString(),
      };
      this.#announce();
      return this.#current;
    });
  }

  putStatus(holder: string, fence: number, json: string) {
    return this.#ready(() => {
      if (!this.#holds(holder, fence)) return false;
      this.#status = json;
      return true;
    });
  }

  status() {
    return this.#ready(() => this.#status);
  }

  sharedKey(proposal: string) {
    return this.#ready(() => this.#key ??= proposal);
  }

  subscribe(onBundle: () => void): Promise<void> {
    this.#listeners.push(onBundle);
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
