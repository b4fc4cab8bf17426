/**
 * Runs fit jobs (`fit_job.ts`) on Deno workers, or in-process.
 *
 * The training data (the layout and every question's arrays) lives in
 * shared memory: each worker is handed it once and reads it in place. A job
 * writes its results into shared arrays its caller allocated, so the caller
 * can wait for jobs synchronously (`Atomics.wait` on a counter the workers
 * bump) and `train` stays a plain function. Which worker runs a job never
 * changes what the job computes: results are combined by the caller in a
 * fixed order, so training gives the same bytes for any number of workers.
 *
 * @module
 */

import type { TrainingLayout } from "./corpus.ts";
import { type FitJob, type QuestionData, runFitJob } from "./fit_job.ts";

/** What a pool runs jobs on: a layout, its row count and the questions. */
export interface JobContext {
  layout: TrainingLayout;
  rows: number;
  questions: readonly QuestionData[];
}

/** Runs jobs and reports each one's end; see `startRunner`. */
export interface JobRunner {
  /** Queues a job; `onDone` runs (on the calling thread) once it finished. */
  submit(job: FitJob, onDone: () => void): void;
  /** Runs until every queued job (and every job their `onDone` queued) is done; `idle` is called about every second. */
  drain(idle?: () => void): void;
  /** Stops the workers. */
  close(): void;
}

/**
 * A runner with `workers` workers; with 1 (or fewer), jobs run in-process
 * when `drain` is called, and no worker is started.
 */
export function startRunner(context: JobContext, workers: number): JobRunner {
  return workers <= 1
    ? new InProcessRunner(context)
    : new WorkerRunner(context, workers);
}

class InProcessRunner implements JobRunner {
  #queue: { job: FitJob; onDone: () => void }[] = [];
  constructor(private context: JobContext) {}
  submit(job: FitJob, onDone: () => void): void {
    this.#queue.push({ job, onDone });
  }
  drain(idle: () => void = () => {}): void {
    let last = performance.now();
    const tick = () => {
      const now = performance.now();
      if (now - last >= 1000) {
        last = now;
        idle();
      }
    };
    for (let next = this.#queue.shift(); next; next = this.#queue.shift()) {
      const { layout, rows, questions } = this.context;
      runFitJob(layout, rows, questions[next.job.question]!, next.job, tick);
      next.onDone();
    }
  }
  close(): void {}
}

/** Worker states in a slot's control word. */
const BUSY = 0;
const DONE = 1;
const FAILED = 2;
const IDLE = 3;

/** Longest error message a worker hands back, in bytes. */
const MESSAGE_BYTES = 2048;

/** Messages to `fit_worker.ts`. */
export type WorkerMessage =
  | {
    type: "init";
    context: JobContext;
    /** `[0]` this worker's state; bumped counter shared by all in `finished`. */
    control: Int32Array;
    finished: Int32Array;
    message: Uint8Array;
  }
  | { type: "job"; job: FitJob };

interface Slot {
  worker: Worker;
  control: Int32Array;
  message: Uint8Array;
  running: { job: FitJob; onDone: () => void } | null;
}

class WorkerRunner implements JobRunner {
  #queue: { job: FitJob; onDone: () => void }[] = [];
  #slots: Slot[] = [];
  #finished = new Int32Array(new SharedArrayBuffer(4));

  constructor(context: JobContext, workers: number) {
    for (let w = 0; w < workers; w++) {
      const worker = new Worker(new URL("./fit_worker.ts", import.meta.url), {
        type: "module",
      });
      const control = new Int32Array(new SharedArrayBuffer(4));
      control[0] = IDLE;
      const message = new Uint8Array(new SharedArrayBuffer(MESSAGE_BYTES));
      worker.postMessage(
        {
          type: "init",
          context,
          control,
          finished: this.#finished,
          message,
        } satisfies WorkerMessage,
      );
      this.#slots.push({ worker, control, message, running: null });
    }
  }

  submit(job: FitJob, onDone: () => void): void {
    this.#queue.push({ job, onDone });
  }

  drain(idle: () => void = () => {}): void {
    for (;;) {
      for (const slot of this.#slots) {
        if (slot.running !== null) continue;
        const next = this.#queue.shift();
        if (next === undefined) break;
        slot.running = next;
        Atomics.store(slot.control, 0, BUSY);
        slot.worker.postMessage({ type: "job", job: next.job });
      }
      if (this.#slots.every((s) => s.running === null)) return;
      const seen = Atomics.load(this.#finished, 0);
      let ended = false;
      for (const slot of this.#slots) {
        const state = Atomics.load(slot.control, 0);
        if (slot.running === null || state === BUSY) continue;
        const { onDone } = slot.running;
        slot.running = null;
        if (state === FAILED) {
          this.close();
          const end = slot.message.indexOf(0);
          throw new Error(
            `A training worker failed: ${
              new TextDecoder().decode(
                slot.message.slice(0, end < 0 ? undefined : end),
              )
            }`,
          );
        }
        ended = true;
        onDone();
      }
      if (!ended) {
        if (Atomics.wait(this.#finished, 0, seen, 1000) === "timed-out") {
          idle();
        }
      }
    }
  }

  close(): void {
    for (const slot of this.#slots) slot.worker.terminate();
    this.#slots = [];
  }
}

/** Marks a worker's job done (or failed with `error`) and wakes the waiting caller. */
export function reportJobEnd(
  control: Int32Array,
  finished: Int32Array,
  message: Uint8Array,
  error?: unknown,
): void {
  if (error !== undefined) {
    const text = error instanceof Error ? error.message : String(error);
    const bytes = new TextEncoder().encode(text).slice(0, MESSAGE_BYTES - 1);
    message.fill(0);
    message.set(bytes);
  }
  Atomics.store(control, 0, error === undefined ? DONE : FAILED);
  Atomics.add(finished, 0, 1);
  Atomics.notify(finished, 0);
}
