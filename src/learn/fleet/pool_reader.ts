/**
 * Every learning replica reads the fleet's pool (`learn_store.ts`) into its
 * own folder, so that any of them can take over as the learner with the
 * fleet's whole log: `log` chunks go to `DIR/feedback.jsonl` (what a
 * retrain reads, rotated as a lone learner's is), `history` chunks to
 * `DIR/retrains.jsonl` (what a restart or a new learner resumes from: the
 * tests spent, the schedule).
 *
 * Exactly once: after each batch is appended, `DIR/pool.json` records the
 * last pool id read and the two files' sizes (written whole, by a rename).
 * At the next start a file longer than recorded is cut back to it (a batch
 * appended but not recorded, read again now), and a log shorter than
 * recorded was rotated by that batch, whose lines are all it holds: it is
 * emptied. So each chunk is in the folder once, however the process ends.
 *
 * @module
 */

import {
  type LearnStore,
  type PooledChunk,
  poolIdBefore,
} from "../../live/mod.ts";
import { type FeedbackLog, openFeedbackLog } from "../../serve/mod.ts";
import { LEARN_FILES } from "../retrain.ts";

/** The file that records where the folder stands in the pool. */
export const POOL_FILE = "pool.json";
/** Chunks read per call. */
const READ_BATCH = 1_000;

/** Where the folder stands in the pool. */
export interface PoolPosition {
  /** The last pool id appended ("0-0": none). */
  after: string;
  /** Bytes of `feedback.jsonl` and `retrains.jsonl` once it was appended. */
  log: number;
  history: number;
}

/** What a pool reader is told. */
export interface PoolReaderOptions {
  dir: string;
  store: LearnStore;
  /** The feedback log's rotation bound (`--feedback-log-max-mb`); none when absent. */
  maxLogBytes?: number | undefined;
  /** Told every batch once it is in the folder. */
  onChunks?: ((chunks: readonly PooledChunk[]) => void) | undefined;
  log?: ((line: string) => void) | undefined;
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await Deno.stat(path)).size;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return 0;
    throw e;
  }
}

async function cutTo(path: string, size: number): Promise<void> {
  using f = await Deno.open(path, { write: true });
  await f.truncate(size);
}

/**
 * Cuts the folder's log and history back to `position`: a file longer than
 * recorded loses its tail (appended, never recorded), and a log shorter
 * than recorded was rotated by that batch, whose lines are all it holds.
 */
async function cutBack(dir: string, position: PoolPosition): Promise<void> {
  const logPath = `${dir}/${LEARN_FILES.log}`;
  const historyPath = `${dir}/${LEARN_FILES.history}`;
  const logSize = await sizeOf(logPath);
  if (logSize !== position.log && logSize > 0) {
    await cutTo(logPath, logSize > position.log ? position.log : 0);
  }
  if ((await sizeOf(historyPath)) > position.history) {
    await cutTo(historyPath, position.history);
  }
}

/** Reads the pool into a folder (see the module doc). */
export class PoolReader {
  readonly #dir: string;
  readonly #store: LearnStore;
  readonly #onChunks: (chunks: readonly PooledChunk[]) => void;
  readonly #log: (line: string) => void;
  readonly #feedback: FeedbackLog;
  #position: PoolPosition;
  #running: Promise<boolean> | null = null;
  #timer: ReturnType<typeof setInterval> | undefined;
  #read = 0;
  #warnedGap = false;
  #reachable: boolean | null = null;

  private constructor(
    options: PoolReaderOptions,
    position: PoolPosition,
    feedback: FeedbackLog,
  ) {
    this.#dir = options.dir;
    this.#store = options.store;
    this.#onChunks = options.onChunks ?? (() => {});
    this.#log = options.log ?? ((l) => console.error(l));
    this.#position = position;
    this.#feedback = feedback;
  }

  /** Opens the folder's place in the pool, cutting back what was appended but not recorded. */
  static async open(options: PoolReaderOptions): Promise<PoolReader> {
    const dir = options.dir;
    const logPath = `${dir}/${LEARN_FILES.log}`;
    const historyPath = `${dir}/${LEARN_FILES.history}`;
    let position: PoolPosition;
    try {
      position = JSON.parse(
        await Deno.readTextFile(`${dir}/${POOL_FILE}`),
      ) as PoolPosition;
      await cutBack(dir, position);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
      // A folder new to the pool: what it holds stays, the pool comes after.
      position = {
        after: "0-0",
        log: await sizeOf(logPath),
        history: await sizeOf(historyPath),
      };
    }
    const feedback = await openFeedbackLog(logPath, {
      maxBytes: options.maxLogBytes,
      warn: options.log,
    });
    return new PoolReader(options, position, feedback);
  }

  /** The last pool id in the folder. */
  get after(): string {
    return this.#position.after;
  }

  /** Chunks read into the folder since it opened. */
  get read(): number {
    return this.#read;
  }

  /** Whether the last read reached the store (null: none yet). */
  get reachable(): boolean | null {
    return this.#reachable;
  }

  /** Reads the pool every `everyMs`. */
  start(everyMs = 200): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => void this.step().catch(() => {}), everyMs);
    Deno.unrefTimer(this.#timer);
  }

  /**
   * Reads one batch into the folder (waits for one running); true when
   * the pool may hold more. Rejects when the store does not answer.
   */
  step(): Promise<boolean> {
    this.#running ??= this.#step().finally(() => this.#running = null);
    return this.#running;
  }

  /** Reads until the folder has everything the pool holds now. Rejects when the store does not answer. */
  async catchUp(): Promise<void> {
    while (await this.step()) { /* more */ }
  }

  async #step(): Promise<boolean> {
    let got;
    try {
      got = await this.#store.read(this.#position.after, READ_BATCH);
    } catch (e) {
      this.#reachable = false;
      throw e;
    }
    this.#reachable = true;
    const { chunks, first } = got;
    if (
      !this.#warnedGap && this.#position.after !== "0-0" && first !== null &&
      poolIdBefore(this.#position.after, first) && chunks[0]?.id === first
    ) {
      this.#warnedGap = true;
      this.#log(
        `learn: the fleet's pool no longer holds every chunk after this folder's last (${this.#position.after}; it keeps the newest ones): labels of that gap are missing here`,
      );
    }
    if (chunks.length === 0) return false;
    const log = chunks.filter((c) => c.kind === "log").map((c) => c.text)
      .join("");
    const history = chunks.filter((c) => c.kind === "history").map((c) =>
      c.text
    ).join("");
    const historyPath = `${this.#dir}/${LEARN_FILES.history}`;
    try {
      if (log !== "") await this.#feedback.append(log);
      if (history !== "") {
        await Deno.writeTextFile(historyPath, history, { append: true });
      }
    } catch (e) {
      // Half written: cut back to the last record, so the batch read
      // again is in the folder once.
      await cutBack(this.#dir, this.#position).catch(() => {});
      throw e;
    }
    const position: PoolPosition = {
      after: chunks.at(-1)!.id,
      log: await sizeOf(`${this.#dir}/${LEARN_FILES.log}`),
      history: await sizeOf(historyPath),
    };
    const temp = `${this.#dir}/${POOL_FILE}.tmp`;
    await Deno.writeTextFile(temp, JSON.stringify(position));
    await Deno.rename(temp, `${this.#dir}/${POOL_FILE}`);
    this.#position = position;
    this.#read += chunks.length;
    this.#onChunks(chunks);
    return chunks.length === READ_BATCH;
  }

  /** Stops reading (after the batch running) and closes the log. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running?.catch(() => {});
    await this.#feedback.close();
  }
}
