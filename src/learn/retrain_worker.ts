/**
 * The worker a learning service retrains in, off the thread that serves:
 * it takes one `RetrainJob`, runs `retrainPasses` and posts back each
 * pass's outcome (or the error's message), then waits to be ended. When a
 * pass writes a bundle, it says so and waits until the service has swapped
 * it in before the next pass measures against it. Never imported through
 * `mod.ts`: `Learner` starts it by URL.
 *
 * @module
 */

/// <reference lib="deno.worker" />

import { embedAhead, type RetrainJob, retrainPasses } from "./retrain.ts";

/** A message back from the worker. */
export type RetrainMessage =
  | { type: "note"; line: string }
  /** A pass wrote `DIR/bundle`: swap it in, then answer `{ type: "swapped" }`. */
  | { type: "swap" }
  /** One pass ended (the outcomes of `done` list it again). */
  | { type: "pass"; outcome: Awaited<ReturnType<typeof retrainPasses>>[number] }
  | { type: "done"; outcomes: Awaited<ReturnType<typeof retrainPasses>> }
  | { type: "embedded"; texts: number }
  | { type: "failed"; message: string };

/** A message to the worker: the job, embedding ahead, or the word that a bundle was swapped in. */
export type RetrainRequest =
  | { type: "job"; job: RetrainJob }
  | { type: "embed"; job: RetrainJob }
  | { type: "swapped" };

let swapped: (() => void) | null = null;

self.onmessage = async (e: MessageEvent<RetrainRequest>) => {
  const post = (m: RetrainMessage) => self.postMessage(m);
  if (e.data.type === "swapped") {
    swapped?.();
    return;
  }
  try {
    if (e.data.type === "embed") {
      post({ type: "embedded", texts: await embedAhead(e.data.job) });
      return;
    }
    const outcomes = await retrainPasses(
      e.data.job,
      (line) => post({ type: "note", line }),
      true,
      () =>
        new Promise<void>((resolve) => {
          swapped = resolve;
          post({ type: "swap" });
        }),
      (outcome) => post({ type: "pass", outcome }),
    );
    post({ type: "done", outcomes });
  } catch (error) {
    post({
      type: "failed",
      message: error instanceof Error
        ? `${error.name}: ${error.message}`
        : String(error),
    });
  }
};
