/**
 * The sentence encoder (an edge module: it reads the model's files and
 * runs TensorFlow.js): its name and files (`package.ts`), the model in one
 * thread (`model.ts`), a pool of workers (`pool.ts`), the queue a service
 * asks it through (`queue.ts`) and the embedding cache (`cache.ts`). The engine never imports it: it takes embeddings as
 * input (`src/engine/semantic.ts`).
 *
 * @module
 */

export * from "./package.ts";
export * from "./identity.ts";
import type { Encoder } from "./model.ts";
import type { ModelFiles } from "./package.ts";
export type { Encoder };

// TensorFlow.js (`model.ts`) and the model's files (`embedded.ts`) are
// loaded when first asked for, never by importing this module: every
// command imports it (through `train`), and a process that never embeds a
// text must not pay for them (nor, under locked-down permissions, see
// TensorFlow.js fail to find its WebAssembly binary).

/** Builds the encoder in this thread from its files (see `model.ts`). */
export async function loadEncoder(files: ModelFiles): Promise<Encoder> {
  return (await import("./model.ts")).loadEncoder(files);
}

/** This program's encoder files, their hash checked (see `embedded.ts`). */
export async function readThisEncoder(): Promise<ModelFiles> {
  return (await import("./embedded.ts")).embeddedEncoder();
}
export {
  DEFAULT_BATCH,
  DEFAULT_POOL,
  EncoderPool,
  type PoolOptions,
  QueueFull,
} from "./pool.ts";
export { EmbeddingCache, readCache, writeCache } from "./cache.ts";
export {
  DEFAULT_ENCODER_QUEUE,
  EncoderQueue,
  type EncoderQueueOptions,
  PoolEncoder,
  type TextEncoder512,
} from "./queue.ts";
