/**
 * A Web Worker that holds one encoder: told the model's files once
 * (`{ files }`), then embeds batches (`{ id, texts }`) and answers
 * `{ id, vectors }` (the buffers transferred) or `{ id, error }`.
 *
 * @module
 */

import { type Encoder, loadEncoder } from "./model.ts";
import type { ModelFiles } from "./package.ts";

/** What the pool sends a worker. */
export type ToWorker =
  | { kind: "load"; files: ModelFiles }
  | { kind: "embed"; id: number; texts: string[] };

/** What a worker answers. */
export type FromWorker =
  | { kind: "loaded" }
  | { kind: "vectors"; id: number; vectors: Float32Array[] }
  | { kind: "error"; id: number; error: string };

// deno-lint-ignore no-explicit-any
const scope = self as any;
let encoder: Promise<Encoder> | null = null;

scope.onmessage = async (event: MessageEvent<ToWorker>) => {
  const m = event.data;
  if (m.kind === "load") {
    encoder = loadEncoder(m.files);
    try {
      await encoder;
      // The model's files and their copies are garbage now: collected at
      // once where the process allows it (--expose-gc), not when V8 gets
      // to it, they would otherwise stay resident for a while.
      (globalThis as { gc?: () => void }).gc?.();
      scope.postMessage({ kind: "loaded" } satisfies FromWorker);
    } catch (e) {
      scope.postMessage(
        {
          kind: "error",
          id: -1,
          error: (e as Error).message,
        } satisfies FromWorker,
      );
    }
    return;
  }
  try {
    if (encoder === null) throw new Error("The encoder worker was not loaded");
    const vectors = await (await encoder).embed(m.texts);
    scope.postMessage(
      { kind: "vectors", id: m.id, vectors } satisfies FromWorker,
      vectors.map((v) => v.buffer),
    );
  } catch (e) {
    scope.postMessage(
      {
        kind: "error",
        id: m.id,
        error: (e as Error).message,
      } satisfies FromWorker,
    );
  }
};
