/**
 * The traces' embeddings for the second tier: from the embedding cache
 * (`train --embed-cache FILE`) where it has them and from the encoder on a
 * pool of workers for the rest, with progress. Training's only contact
 * with the encoder; the trainer itself takes the embeddings as numbers.
 *
 * @module
 */

import {
  EMBEDDING_SIZE,
  EmbeddingCache,
  EncoderPool,
  readCache,
  readThisEncoder,
  THIS_ENCODER,
  writeCache,
} from "../encoder/mod.ts";
import { semanticSample } from "./semantic_sample.ts";

/** Where embedding reports its progress (a command's printer, a learner's log). */
export interface EmbedProgress {
  /** A line of progress. */
  line(text: string): void;
  /** A note worth keeping (a cache that could not be read). */
  note(text: string): void;
  /** A meter line, rewritten in place on a terminal; `final` ends it. */
  meterLine(text: string, final: boolean): void;
  /** True when lines may be rewritten in place (a terminal): the meter then ticks every second. */
  readonly terminal: boolean;
}

/** Progress that goes nowhere. */
export const SILENT_EMBED: EmbedProgress = {
  line() {},
  note() {},
  meterLine() {},
  terminal: false,
};

/**
 * One embedding per text. With `cachePath`, texts the cache holds are not
 * embedded again and the new ones are added to it (written when done).
 */
export async function embedTraces(
  texts: readonly string[],
  cachePath: string | undefined,
  workers: number,
  printer: EmbedProgress = SILENT_EMBED,
): Promise<Float32Array[]> {
  let cache: EmbeddingCache;
  if (cachePath === undefined) {
    cache = new EmbeddingCache(THIS_ENCODER, EMBEDDING_SIZE);
  } else {
    const read = await readCache(cachePath, THIS_ENCODER, EMBEDDING_SIZE);
    cache = read.cache;
    if (read.note !== null) printer.note(read.note);
    else printer.line(`embedding cache ${cachePath}: ${cache.size} texts`);
  }
  let pool: EncoderPool | null = null;
  try {
    const vectors = await cache.embedAll(texts, async (missing) => {
      const started = performance.now();
      printer.line(
        `loading the encoder on ${workers} ${
          workers === 1 ? "worker" : "workers"
        }`,
      );
      pool = await EncoderPool.start(await readThisEncoder(), { workers });
      // The estimate starts from the pace measured once the first batch is
      // done: loading the encoder and its first batch say nothing of it.
      const eta = new RemainingTime();
      let next = performance.now() + 1000;
      const out = await pool.embedAll(missing, undefined, (done, total) => {
        const now = performance.now();
        const left = eta.seconds(done, total, now);
        if (now < next || done === total || left === null) return;
        next = now + (printer.terminal ? 1000 : 10_000);
        printer.meterLine(
          `embedding: ${done} of ${total} texts, about ${
            Math.ceil(left)
          } s left`,
          false,
        );
      });
      const seconds = (performance.now() - started) / 1000;
      printer.meterLine(
        `embedded ${missing.length} texts in ${seconds.toFixed(1)}s (${
          (1000 * seconds / Math.max(1, missing.length)).toFixed(1)
        } ms a text)`,
        true,
      );
      return out;
    });
    if (cachePath !== undefined && cache.added > 0) {
      await writeCache(cachePath, cache);
      printer.line(
        `wrote ${cachePath} (${cache.size} texts, ${cache.added} new)`,
      );
    }
    return vectors;
  } finally {
    (pool as EncoderPool | null)?.close();
  }
}

/**
 * `embedTraces` for the traces `semanticSample` picks (all of them up to
 * `max`): one embedding per trace, undefined for a trace outside the
 * sample; says when it samples.
 */
export async function embedSample(
  texts: readonly string[],
  max: number,
  seed: number,
  cachePath: string | undefined,
  workers: number,
  printer: EmbedProgress = SILENT_EMBED,
): Promise<(Float32Array | undefined)[]> {
  const picked = semanticSample(texts.length, max, seed);
  if (picked.length < texts.length) {
    printer.line(
      `second tier: embedding a sample of ${picked.length} of ${texts.length} traces (--embed-max ${max}); the table trains on all of them`,
    );
  }
  const vectors = await embedTraces(
    picked.map((i) => texts[i]!),
    cachePath,
    workers,
    printer,
  );
  const out: (Float32Array | undefined)[] = new Array(texts.length);
  picked.forEach((i, j) => out[i] = vectors[j]);
  return out;
}

/**
 * How long a job of countable steps has left, from the throughput measured
 * since its first step was done: the time before it (loading a model,
 * warming it up) says nothing of the pace, so no estimate is given until a
 * step after the first has been measured.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RemainingTime } from "./embed.ts";
 * const eta = new RemainingTime();
 * assert.equal(eta.seconds(32, 1000, 9_000), null); // the first batch, after a slow start
 * assert.equal(eta.seconds(64, 1000, 9_500), 14.625); // 32 texts in 0.5 s since
 * ```
 */
export class RemainingTime {
  #from: { done: number; at: number } | null = null;

  /**
   * Seconds left for `total` steps with `done` done at `atMs`
   * (milliseconds on any clock that only goes forward); null until a
   * pace has been measured.
   */
  seconds(done: number, total: number, atMs: number): number | null {
    if (this.#from === null) {
      this.#from = { done, at: atMs };
      return null;
    }
    const steps = done - this.#from.done;
    const ms = atMs - this.#from.at;
    if (steps <= 0 || ms <= 0) return null;
    return ((total - done) * ms) / steps / 1000;
  }
}
