/**
 * A training worker: receives the shared training data once, then runs the
 * fit jobs it is sent (see `pool.ts`).
 *
 * @module
 */

/// <reference lib="deno.worker" />

import { runFitJob } from "./fit_job.ts";
import { type JobContext, reportJobEnd, type WorkerMessage } from "./pool.ts";

let state:
  | {
    context: JobContext;
    control: Int32Array;
    finished: Int32Array;
    message: Uint8Array;
  }
  | null = null;

self.onmessage = (event: MessageEvent<WorkerMessage>) => {
  const data = event.data;
  if (data.type === "init") {
    state = data;
    return;
  }
  if (state === null) throw new Error("fit worker: a job came before init");
  const { context, control, finished, message } = state;
  try {
    const question = context.questions[data.job.question];
    if (question === undefined) {
      throw new RangeError(`No question ${data.job.question} in this worker`);
    }
    runFitJob(context.layout, context.rows, question, data.job);
    reportJobEnd(control, finished, message);
  } catch (e) {
    reportJobEnd(control, finished, message, e);
  }
};
