/**
 * A learning replica's outbox (`serve --learn DIR --live-store URL`):
 * everything it would have written to its feedback log (feedback lines,
 * ledger and pick lines) and its retrain records go to the fleet's pool
 * (`learn_store.ts`) through here, exactly once.
 *
 * Each chunk is first appended to a file of this run (`DIR/outbox/SOURCE
 * .jsonl`, one JSON line `{"seq", "kind", "text"}` per chunk, SOURCE a
 * random name), then shipped; `append` resolves once the pool has it, or
 * once the store failed to take it (it is on disk: it goes when the store
 * answers again), or after `shipWaitMs`. So a proxy's 2xx means the pool
 * has the label, or this replica's disk does. The store appends a chunk
 * only when its number is above the last of its source it holds, so a
 * chunk shipped twice (a lost reply, a replay) is pooled once.
 *
 * At the next start, the files of earlier runs are shipped first (what a
 * kill or a store outage left), and removed once the pool has all of
 * them: the journal of a learning replica. A file is started afresh
 * (another source) once it passed `ROTATE_BYTES` with everything shipped.
 *
 * @module
 */

import type { Chunk, ChunkKind, LearnStore } from "../../live/mod.ts";
import { randomHex8 } from "../../live/mod.ts";

/** Most ms `append` waits for the pool before it resolves anyway. */
export const SHIP_WAIT_MS = 1_000;
/** A file this large, all shipped, is started afresh. */
export const ROTATE_BYTES = 16 * 1024 * 1024;
/** Chunks per call to the store. */
const SHIP_BATCH = 500;
/** Pause before trying a failed store again, ms. */
const RETRY_MS = 500;

/** What an outbox is told. */
export interface OutboxOptions {
  /** The learning folder (its `outbox/` holds the files). */
  dir: string;
  /** This replica's name, as the pool records it. */
  replica: string;
  store: LearnStore;
  /** Lines about the store (stderr by default). */
  log?: ((line: string) => void) | undefined;
  /** See `SHIP_WAIT_MS`. */
  shipWaitMs?: number | undefined;
}

interface Queued {
  readonly source: string;
  readonly chunk: Chunk;
  resolve?: () => void;
}

/** The outbox of one run (see the module doc). */
export class Outbox {
  readonly #dir: string;
  readonly #replica: string;
  readonly #store: LearnStore;
  readonly #log: (line: string) => void;
  readonly #waitMs: number;
  #source: string;
  #file: Deno.FsFile;
  #bytes = 0;
  #seq = 0;
  /** Chunks on disk the pool may not have yet, oldest first. */
  #queue: Queued[] = [];
  /** Per earlier source: its file, removed once shipped. */
  readonly #earlier = new Map<string, string>();
  #writing: Promise<void> = Promise.resolve();
  #shipping: Promise<void> | null = null;
  #again = false;
  #retry: ReturnType<typeof setTimeout> | undefined;
  #reachable: boolean | null = null;
  #shipped = 0;
  #closed = false;

  private constructor(
    options: OutboxOptions,
    source: string,
    file: Deno.FsFile,
  ) {
    this.#dir = options.dir;
    this.#replica = options.replica;
    this.#store = options.store;
    this.#log = options.log ?? ((l) => console.error(l));
    this.#waitMs = options.shipWaitMs ?? SHIP_WAIT_MS;
    this.#source = source;
    this.#file = file;
  }

  /**
   * Opens the outbox of `options.dir`: queues the chunks earlier runs left
   * (shipped at once) and starts a file for this run.
   */
  static async open(options: OutboxOptions): Promise<Outbox> {
    const folder = `${options.dir}/outbox`;
    await Deno.mkdir(folder, { recursive: true });
    const earlier: {
      source: string;
      path: string;
      chunks: Chunk[];
      mtime: number;
    }[] = [];
    for await (const e of Deno.readDir(folder)) {
      if (!e.isFile || !e.name.endsWith(".jsonl")) continue;
      const path = `${folder}/${e.name}`;
      const info = await Deno.stat(path);
      earlier.push({
        source: e.name.slice(0, -".jsonl".length),
        path,
        chunks: parseOutbox(await Deno.readTextFile(path)),
        mtime: info.mtime?.getTime() ?? 0,
      });
    }
    // Oldest first: a restart ships what the run before left before its own.
    earlier.sort((a, b) => a.mtime - b.mtime);
    const source = randomHex8() + randomHex8();
    const file = await Deno.open(`${folder}/${source}.jsonl`, {
      create: true,
      append: true,
    });
    const box = new Outbox(options, source, file);
    for (const e of earlier) {
      box.#earlier.set(e.source, e.path);
      for (const chunk of e.chunks) {
        box.#queue.push({ source: e.source, chunk });
      }
    }
    if (earlier.length > 0) {
      const n = earlier.reduce((s, e) => s + e.chunks.length, 0);
      box.#log(
        `learn: the outbox holds ${n} chunk(s) of ${earlier.length} earlier run(s); shipping them to the fleet's pool first (the pool takes each once)`,
      );
      box.#kick();
    }
    return box;
  }

  /** This run's source name. */
  get source(): string {
    return this.#source;
  }

  /** Chunks on disk the pool is not known to have. */
  get waiting(): number {
    return this.#queue.length;
  }

  /** Chunks the pool took from this outbox since it opened. */
  get shipped(): number {
    return this.#shipped;
  }

  /** Whether the store took the last shipment (null: none tried yet). */
  get reachable(): boolean | null {
    return this.#reachable;
  }

  /**
   * Writes one chunk (whole lines) to disk, then ships it; resolves once it
   * is on disk and the pool has it, the store failed, or `shipWaitMs`
   * passed (see the module doc). Rejects only when the disk write fails.
   */
  append(kind: ChunkKind, text: string): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("the outbox is closed"));
    const chunk: Chunk = { seq: ++this.#seq, kind, text };
    const line = `${JSON.stringify(chunk)}\n`;
    const bytes = new TextEncoder().encode(line);
    const written = this.#writing.then(async () => {
      let at = 0;
      while (at < bytes.length) {
        at += await this.#file.write(bytes.subarray(at));
      }
      this.#bytes += bytes.length;
    });
    this.#writing = written.catch(() => {});
    return written.then(() =>
      new Promise<void>((resolve) => {
        if (this.#reachable === false) {
          // The store did not answer the last shipment: on disk is enough;
          // shipped once it answers (tried every `RETRY_MS`).
          this.#queue.push({ source: this.#source, chunk });
          resolve();
          return;
        }
        const timer = setTimeout(resolve, this.#waitMs);
        this.#queue.push({
          source: this.#source,
          chunk,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
        this.#kick();
      })
    );
  }

  /** Ships what waits (one run at a time; another follows when asked meanwhile). */
  #kick(): void {
    this.#again = true;
    this.#shipping ??= this.#ship().finally(() => this.#shipping = null);
  }

  async #ship(): Promise<void> {
    while (this.#again && this.#queue.length > 0) {
      this.#again = false;
      const head = this.#queue[0]!.source;
      const batch: Queued[] = [];
      for (const q of this.#queue) {
        if (q.source !== head || batch.length >= SHIP_BATCH) break;
        batch.push(q);
      }
      let last: number;
      try {
        last = await this.#store.append(
          head,
          this.#replica,
          batch.map((q) => q.chunk),
        );
      } catch (e) {
        if (this.#reachable !== false) {
          this.#log(
            `learn: the fleet's pool (${this.#store.description}) does not take labels (${
              (e as Error)?.message ?? e
            }): they wait on disk in ${this.#dir}/outbox and go when it answers`,
          );
        }
        this.#reachable = false;
        // Everything waiting is acknowledged from disk; tried again shortly.
        for (const q of this.#queue) {
          q.resolve?.();
          delete q.resolve;
        }
        if (!this.#closed) {
          clearTimeout(this.#retry);
          this.#retry = setTimeout(() => this.#kick(), RETRY_MS);
          Deno.unrefTimer(this.#retry);
        }
        return;
      }
      if (this.#reachable === false) {
        this.#log(
          `learn: the fleet's pool answers again; ${this.#queue.length} chunk(s) waited on disk`,
        );
      }
      this.#reachable = true;
      const done = this.#queue.filter((q) =>
        q.source === head && q.chunk.seq <= last
      );
      this.#shipped += done.length;
      this.#queue = this.#queue.filter((q) =>
        !(q.source === head && q.chunk.seq <= last)
      );
      for (const q of done) q.resolve?.();
      if (!this.#queue.some((q) => q.source === head)) {
        const path = this.#earlier.get(head);
        if (path !== undefined) {
          this.#earlier.delete(head);
          await Deno.remove(path).catch(() => {});
        }
      }
      if (this.#queue.length > 0) this.#again = true;
    }
    await this.#rotateWhenDone();
  }

  /** Starts a new file once this one is large and all shipped. */
  async #rotateWhenDone(): Promise<void> {
    if (this.#bytes < ROTATE_BYTES || this.#queue.length > 0) return;
    await this.#writing;
    if (this.#queue.length > 0) return;
    const old = `${this.#dir}/outbox/${this.#source}.jsonl`;
    const source = randomHex8() + randomHex8();
    const file = await Deno.open(`${this.#dir}/outbox/${source}.jsonl`, {
      create: true,
      append: true,
    });
    this.#file.close();
    this.#file = file;
    this.#source = source;
    this.#seq = 0;
    this.#bytes = 0;
    await Deno.remove(old).catch(() => {});
  }

  /**
   * Tries the store for at most `boundMs` until everything is shipped, then
   * closes the file: what is left stays on disk for the next start.
   */
  async close(boundMs = 3_000): Promise<void> {
    const end = performance.now() + boundMs;
    await this.#writing;
    while (this.#queue.length > 0 && performance.now() < end) {
      this.#kick();
      await this.#shipping;
      if (this.#queue.length > 0) {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    this.#closed = true;
    clearTimeout(this.#retry);
    await this.#shipping;
    this.#file.close();
    if (this.#queue.length > 0) {
      this.#log(
        `learn: ${this.#queue.length} chunk(s) not yet in the fleet's pool stay in ${this.#dir}/outbox; the next start ships them`,
      );
    } else {
      // All of it is in the pool.
      await Deno.remove(`${this.#dir}/outbox/${this.#source}.jsonl`).catch(
        () => {},
      );
    }
  }
}

/**
 * The chunks of an outbox file's text; a torn last line (a kill
 * mid-write) and lines that are not chunks are skipped.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseOutbox } from "./outbox.ts";
 * const text = '{"seq":1,"kind":"log","text":"a\\n"}\n{"seq":2,"ki';
 * assert.deepEqual(parseOutbox(text), [{ seq: 1, kind: "log", text: "a\n" }]);
 * ```
 */
export function parseOutbox(text: string): Chunk[] {
  const out: Chunk[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    try {
      const c = JSON.parse(line) as Partial<Chunk>;
      if (
        typeof c.seq === "number" && Number.isSafeInteger(c.seq) &&
        c.seq >= 1 && (c.kind === "log" || c.kind === "history") &&
        typeof c.text === "string"
      ) out.push({ seq: c.seq, kind: c.kind, text: c.text });
    } catch { /* a torn line */ }
  }
  return out;
}
