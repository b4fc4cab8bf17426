/**
 * Encoders on Web Workers (2 by default) behind a bounded queue: `embed`
 * sends one batch to the least busy worker and refuses at once
 * (`QueueFull`) when `queue` batches wait already; `embedAll` embeds a
 * whole list in batches, keeping the queue filled but never over its
 * bound, with progress.
 *
 * @module
 */

import type { FromWorker, ToWorker } from "./worker.ts";
import type { ModelFiles } from "./package.ts";

/** How a pool is set up. */
export interface PoolOptions {
  /** Workers, each with its own copy of the model (about 60 MB each). */
  workers: number;
  /** Batches waiting or running at most, over all workers. */
  queue: number;
}

/** Defaults: two workers, eight batches at most. */
export const DEFAULT_POOL: PoolOptions = { workers: 2, queue: 8 };

/** Texts per batch for `embedAll` (see `scripts/bench-encoder.ts`). */
export const DEFAULT_BATCH = 32;

/** A batch refused because the queue is full: the caller may retry later or shed. */
export class QueueFull extends Error {
  override name = "QueueFull";
}

interface Pending {
  resolve: (v: Float32Array[]) => void;
  reject: (e: Error) => void;
  worker: number;
}

/** Workers holding the encoder; close it when done. */
export class EncoderPool {
  readonly #workers: Worker[];
  readonly #busy: number[];
  readonly #pending = new Map<number, Pending>();
  readonly #queue: number;
  #next = 0;
  #closed = false;

  private constructor(workers: Worker[], queue: number) {
    this.#workers = workers;
    this.#busy = workers.map(() => 0);
    this.#queue = queue;
    workers.forEach((w, at) => {
      w.onmessage = (e: MessageEvent<FromWorker>) => this.#answer(at, e.data);
      w.onerror = (e) => {
        e.preventDefault();
        this.#fail(at, new Error(`Encoder worker ${at} failed: ${e.message}`));
      };
    });
  }

  /** Starts the workers and loads the model in each (from `files`, read once by the caller). */
  static async start(
    files: ModelFiles,
    options: Partial<PoolOptions> = {},
  ): Promise<EncoderPool> {
    const { workers, queue } = { ...DEFAULT_POOL, ...options };
    if (!Number.isInteger(workers) || workers < 1) {
      throw new RangeError(
        `workers must be a whole number of at least 1: got ${workers}`,
      );
    }
    if (!Number.isInteger(queue) || queue < 1) {
      throw new RangeError(
        `queue must be a whole number of at least 1: got ${queue}`,
      );
    }
    const started = Array.from(
      { length: workers },
      () =>
        new Worker(new URL("./worker.ts", import.meta.url), { type: "module" }),
    );
    try {
      await Promise.all(
        started.map((w) =>
          new Promise<void>((resolve, reject) => {
            w.onmessage = (e: MessageEvent<FromWorker>) => {
              if (e.data.kind === "loaded") resolve();
              else if (e.data.kind === "error") reject(new Error(e.data.error));
            };
            w.onerror = (e) => {
              e.preventDefault();
              reject(new Error(`Encoder worker failed to start: ${e.message}`));
            };
            w.postMessage({ kind: "load", files } satisfies ToWorker);
          })
        ),
      );
    } catch (e) {
      for (const w of started) w.terminate();
      throw e;
    }
    return new EncoderPool(started, queue);
  }

  /** Batches waiting or running now. */
  get inFlight(): number {
    return this.#pending.size;
  }

  /**
   * Embeds one batch on the least busy worker. Throws `QueueFull` when
   * `queue` batches are in flight already, and an Error once closed.
   */
  embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (this.#closed) {
      return Promise.reject(new Error("The encoder pool is closed"));
    }
    if (this.#pending.size >= this.#queue) {
      return Promise.reject(
        new QueueFull(`The encoder queue is full (${this.#queue} batches)`),
      );
    }
    let worker = 0;
    for (let w = 1; w < this.#workers.length; w++) {
      if (this.#busy[w]! < this.#busy[worker]!) worker = w;
    }
    const id = this.#next++;
    this.#busy[worker]!++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, worker });
      this.#workers[worker]!.postMessage(
        { kind: "embed", id, texts: [...texts] } satisfies ToWorker,
      );
    });
  }

  /**
   * Embeds every text, in batches of `batch`, with at most the queue's
   * bound in flight; `progress` is told the texts done and the total after
   * each batch. The result follows the order of `texts`.
   */
  async embedAll(
    texts: readonly string[],
    batch = DEFAULT_BATCH,
    progress?: (done: number, total: number) => void,
  ): Promise<Float32Array[]> {
    const out = new Array<Float32Array>(texts.length);
    let done = 0;
    let from = 0;
    const running = new Set<Promise<void>>();
    while (from < texts.length || running.size > 0) {
      while (from < texts.length && this.#pending.size < this.#queue) {
        const start = from;
        const part = texts.slice(start, start + batch);
        from += part.length;
        const p: Promise<void> = this.embed(part).then((vectors) => {
          vectors.forEach((v, i) => out[start + i] = v);
          done += part.length;
          progress?.(done, texts.length);
        }).finally(() => running.delete(p));
        running.add(p);
      }
      if (running.size > 0) await Promise.race(running);
    }
    return out;
  }

  /** Stops the workers; batches in flight are refused. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const w of this.#workers) w.terminate();
    for (const p of this.#pending.values()) {
      p.reject(new Error("The encoder pool was closed"));
    }
    this.#pending.clear();
  }

  #answer(worker: number, m: FromWorker): void {
    if (m.kind === "loaded") return;
    const p = this.#pending.get(m.id);
    if (p === undefined) {
      if (m.kind === "error") this.#fail(worker, new Error(m.error));
      return;
    }
    this.#pending.delete(m.id);
    this.#busy[worker]!--;
    if (m.kind === "vectors") p.resolve(m.vectors);
    else p.reject(new Error(`The encoder failed: ${m.error}`));
  }

  #fail(worker: number, error: Error): void {
    for (const [id, p] of this.#pending) {
      if (p.worker !== worker) continue;
      this.#pending.delete(id);
      this.#busy[worker]!--;
      p.reject(error);
    }
  }
}
