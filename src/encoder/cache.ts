/**
 * The embedding cache: embeddings keyed by text, in one file, so that a
 * retrain embeds only the texts it has not seen (`train --embed-cache
 * FILE`). The file names the encoder that made it; a cache of another
 * encoder is not used (the caller is told why) and is replaced on save.
 *
 * Layout, little-endian: the 8-byte tag `DTEMBED1`, the u32 dimension,
 * the encoder's 64-character SHA-256 (ASCII), then per entry the u32 byte
 * length of the text's UTF-8, the text, and `dimension` float32s.
 *
 * @module
 */

import { type EncoderName, sameEncoder } from "./package.ts";

const TAG = "DTEMBED1";

/** Embeddings by text, for one encoder. */
export class EmbeddingCache {
  readonly #vectors = new Map<string, Float32Array>();
  #added = 0;

  constructor(readonly encoder: EncoderName, readonly dim: number) {}

  /** Texts held. */
  get size(): number {
    return this.#vectors.size;
  }

  /** Embeddings added since the cache was read. */
  get added(): number {
    return this.#added;
  }

  /** Every text and its embedding, in the order they were added. */
  entries(): IterableIterator<[string, Float32Array]> {
    return this.#vectors.entries();
  }

  /** The text's embedding, or undefined. */
  get(text: string): Float32Array | undefined {
    return this.#vectors.get(text);
  }

  /** Keeps a text's embedding; throws a RangeError for one of the wrong size. */
  set(text: string, vector: Float32Array): void {
    if (vector.length !== this.dim) {
      throw new RangeError(
        `An embedding of ${vector.length} numbers for a cache of ${this.dim}`,
      );
    }
    if (!this.#vectors.has(text)) this.#added++;
    this.#vectors.set(text, vector);
  }

  /**
   * One embedding per text, in order: from the cache, the missing distinct
   * texts embedded by `embed` (once each) and kept.
   */
  async embedAll(
    texts: readonly string[],
    embed: (missing: string[]) => Promise<Float32Array[]>,
  ): Promise<Float32Array[]> {
    const missing = [...new Set(texts.filter((t) => !this.#vectors.has(t)))];
    if (missing.length > 0) {
      const vectors = await embed(missing);
      if (vectors.length !== missing.length) {
        throw new RangeError(
          `Asked for ${missing.length} embeddings, got ${vectors.length}`,
        );
      }
      missing.forEach((t, i) => this.set(t, vectors[i]!));
    }
    return texts.map((t) => this.#vectors.get(t)!);
  }

  /** The file's bytes (see the module doc). */
  encode(): Uint8Array {
    const encoder = new TextEncoder();
    const texts = [...this.#vectors.keys()].map((t) => encoder.encode(t));
    const size = 8 + 4 + 64 +
      texts.reduce((n, t) => n + 4 + t.length + 4 * this.dim, 0);
    const out = new Uint8Array(size);
    const view = new DataView(out.buffer);
    out.set(encoder.encode(TAG), 0);
    view.setUint32(8, this.dim, true);
    out.set(
      encoder.encode(this.encoder.sha256.padEnd(64, " ").slice(0, 64)),
      12,
    );
    let at = 76;
    let e = 0;
    for (const v of this.#vectors.values()) {
      const t = texts[e++]!;
      view.setUint32(at, t.length, true);
      out.set(t, at + 4);
      at += 4 + t.length;
      for (let d = 0; d < this.dim; d++) {
        view.setFloat32(at + 4 * d, v[d]!, true);
      }
      at += 4 * this.dim;
    }
    return out;
  }

  /**
   * Reads a cache file's bytes. Throws a SyntaxError naming `source` and
   * what was wrong for a file that is not a cache or is cut short; a cache
   * of another encoder or dimension comes back as null with the reason.
   */
  static decode(
    bytes: Uint8Array,
    encoder: EncoderName,
    dim: number,
    source = "the embedding cache",
  ): EmbeddingCache | { stale: string } {
    const decoder = new TextDecoder();
    if (bytes.length < 76 || decoder.decode(bytes.subarray(0, 8)) !== TAG) {
      throw new SyntaxError(
        `${source} is not an embedding cache (no ${TAG} tag)`,
      );
    }
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const fileDim = view.getUint32(8, true);
    const sha = decoder.decode(bytes.subarray(12, 76)).trim();
    if (fileDim !== dim || !sameEncoder({ ...encoder, sha256: sha }, encoder)) {
      return {
        stale: `${source} holds embeddings of another encoder (sha256 ${
          sha.slice(0, 12)
        }, ${fileDim} numbers); it is rebuilt`,
      };
    }
    const cache = new EmbeddingCache(encoder, dim);
    let at = 76;
    while (at < bytes.length) {
      if (at + 4 > bytes.length) {
        throw new SyntaxError(`${source} is cut short at byte ${at}`);
      }
      const len = view.getUint32(at, true);
      const end = at + 4 + len + 4 * dim;
      if (end > bytes.length) {
        throw new SyntaxError(`${source} is cut short at byte ${at}`);
      }
      const text = decoder.decode(bytes.subarray(at + 4, at + 4 + len));
      const v = new Float32Array(dim);
      const from = at + 4 + len;
      for (let d = 0; d < dim; d++) v[d] = view.getFloat32(from + 4 * d, true);
      cache.#vectors.set(text, v);
      at = end;
    }
    return cache;
  }
}

/**
 * Reads the cache at `path` for `encoder`: an empty cache when the file is
 * absent or of another encoder (`note` says which), else its contents.
 */
export async function readCache(
  path: string,
  encoder: EncoderName,
  dim: number,
): Promise<{ cache: EmbeddingCache; note: string | null }> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      return {
        cache: new EmbeddingCache(encoder, dim),
        note: `${path} does not exist yet: it is made`,
      };
    }
    throw e;
  }
  const read = EmbeddingCache.decode(bytes, encoder, dim, path);
  if ("stale" in read) {
    return { cache: new EmbeddingCache(encoder, dim), note: read.stale };
  }
  return { cache: read, note: null };
}

/** Writes the cache to `path` whole (a temporary file renamed over it). */
export async function writeCache(
  path: string,
  cache: EmbeddingCache,
): Promise<void> {
  const tmp = `${path}.tmp-${crypto.randomUUID().slice(0, 8)}`;
  await Deno.writeFile(tmp, cache.encode());
  await Deno.rename(tmp, path);
}
