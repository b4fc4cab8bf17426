/**
 * The encoder's queue, as a service runs it: the sentence encoder on a
 * pool of Web Workers (off the event loop) behind a bound counted in
 * texts, started only when a served bundle has a second tier. A text
 * that finds the queue full is refused at once (the service then sheds
 * it: its table answer goes back, uncertified).
 *
 * @module
 */

import { EncoderPool } from "./pool.ts";

/** How the encoder's queue runs (`serve --semantic-workers`, `--semantic-queue`). */
export interface EncoderQueueOptions {
  /** Encoder workers, each with its own copy of the model. */
  workers: number;
  /** Texts waiting or running at the encoder at most; more are shed. */
  queue: number;
}

/**
 * One worker and 16 texts. One worker meets the second tier's latency
 * targets at 40 texts a second (p50 11-15 ms, p99 33-59 ms on a quiet
 * 2-core machine) in at most about 350 MB resident; each more worker adds
 * about 190 MB (docs/benchmarks.md). At about 12 ms a text, a text waits at most about
 * 200 ms.
 */
export const DEFAULT_ENCODER_QUEUE: EncoderQueueOptions = {
  workers: 1,
  queue: 16,
};

/** Something that embeds texts, or refuses at once when busy. */
export interface TextEncoder512 {
  /**
   * The texts' embeddings (one batch to the encoder), or null at once when
   * the queue is full: a batch is taken when its texts fit in the room the
   * queue has left, or whole when nothing waits (an idle encoder takes any
   * batch of a request, which is bounded by the batch route's limit).
   */
  tryEmbed(texts: readonly string[]): Promise<Float32Array[]> | null;
  /** Texts at the encoder now. */
  readonly inFlight: number;
  close(): void;
}

/** The encoder pool behind a queue bound counted in texts. */
export class PoolEncoder implements TextEncoder512 {
  #texts = 0;

  constructor(readonly pool: EncoderPool, readonly queue: number) {}

  tryEmbed(texts: readonly string[]): Promise<Float32Array[]> | null {
    if (this.#texts > 0 && this.#texts + texts.length > this.queue) {
      return null;
    }
    this.#texts += texts.length;
    return this.pool.embed(texts).finally(() => this.#texts -= texts.length);
  }

  get inFlight(): number {
    return this.#texts;
  }

  close(): void {
    this.pool.close();
  }
}

/** The encoder's queue a service asks: the encoder and its bounds. */
export class EncoderQueue {
  constructor(
    readonly encoder: TextEncoder512,
    readonly options: EncoderQueueOptions,
  ) {}

  /**
   * Reads this program's encoder (its files' hashes checked) and starts
   * `options.workers` workers. Throws a RangeError for a bound that is not
   * a whole number of at least 1.
   */
  static async start(
    options: EncoderQueueOptions = DEFAULT_ENCODER_QUEUE,
  ): Promise<EncoderQueue> {
    checkOptions(options);
    // Loaded here, not at the top: TensorFlow.js and the model's files are
    // never loaded by a process that serves no second tier.
    const { embeddedEncoder } = await import("./embedded.ts");
    const pool = await EncoderPool.start(await embeddedEncoder(), {
      workers: options.workers,
      queue: options.queue,
    });
    // Each worker embeds once before serving: its first text costs far
    // more than the next (the graph is compiled then), and no request
    // should pay it.
    await Promise.all(
      Array.from({ length: options.workers }, () => pool.embed(["warm up"])),
    );
    return new EncoderQueue(new PoolEncoder(pool, options.queue), options);
  }

  /** Stops the workers. */
  close(): void {
    this.encoder.close();
  }
}

/** Throws a RangeError naming the first bound that is not a whole number of at least 1. */
function checkOptions(options: EncoderQueueOptions): void {
  for (const [name, v] of Object.entries(options)) {
    if (!Number.isInteger(v) || v < 1) {
      throw new RangeError(
        `semantic ${name} must be a whole number of at least 1: got ${v}`,
      );
    }
  }
}
