/**
 * The worker a learning service retrains in, off the thread that serves:
 * it takes one `RetrainJob`, runs `retrain` and posts back its outcome (or
 * the error's message), then waits to be ended. Never imported through
 * `mod.ts`: `Learner` starts it by URL.
 *
 * @module
 */

/// <reference lib="deno.worker" />

import { retrain, type RetrainJob } from "./retrain.ts";

/** A message back from the worker: a note, the outcome, or a failure. */
export type RetrainMessage =
  | { type: "note"; line: string }
  | { type: "done"; outcome: Awaited<ReturnType<typeof retrain>> }
  | { type: "failed"; message: string };

self.onmessage = async (e: MessageEvent<RetrainJob>) => {
  const post = (m: RetrainMessage) => self.postMessage(m);
  try {
    const outcome = await retrain(
      e.data,
      (line) => post({ type: "note", line }),
    );
    post({ type: "done", outcome });
  } catch (error) {
    post({
      type: "failed",
      message: error instanceof Error
        ? `${error.name}: ${error.message}`
        : String(error),
    });
  }
};
