/**
 * The sentence encoder (an edge module: it reads the model's files and
 * runs TensorFlow.js): its name and files (`package.ts`), the model in one
 * thread (`model.ts`), a pool of workers (`pool.ts`) and the embedding
 * cache (`cache.ts`). The engine never imports it: it takes embeddings as
 * input (`src/engine/semantic.ts`).
 *
 * @module
 */

export * from "./package.ts";
export {
  type Encoder,
  loadEncoder,
  packageFolder,
  readThisEncoder,
} from "./model.ts";
export {
  DEFAULT_BATCH,
  DEFAULT_POOL,
  EncoderPool,
  type PoolOptions,
  QueueFull,
} from "./pool.ts";
export { EmbeddingCache, readCache, writeCache } from "./cache.ts";
