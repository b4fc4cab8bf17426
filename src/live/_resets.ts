/**
 * The history of resets of the live evidence (`POST /v1/live/reset`) a
 * process applied: when, which questions, and whether it was a lone
 * server's own (`local`) or applied from the fleet's store (`store`, on
 * every replica, the one asked included).
 *
 * @module
 */

/** Where a reset came from: a lone server's route, or the fleet's store. */
export type ResetSource = "local" | "store";

/** One reset as statistics show it. */
export interface ResetRecord {
  /** When it was applied here. */
  at: Date;
  /** The question reset (names joined by commas), or null for every question. */
  question: string | null;
  source: ResetSource;
}

/** How many resets the history keeps. */
export const RESET_HISTORY = 20;

/** The resets applied here: a count and the last `RESET_HISTORY`. */
export class ResetHistory {
  #total = 0;
  readonly #last: ResetRecord[] = [];

  /** Records a reset of `question` (null: all) at `at`. */
  record(question: string | null, source: ResetSource, at: Date): void {
    this.#total++;
    this.#last.push({ at, question, source });
    if (this.#last.length > RESET_HISTORY) this.#last.shift();
  }

  /** Resets applied since the process started. */
  get total(): number {
    return this.#total;
  }

  /** The last ones, oldest first. */
  get last(): readonly ResetRecord[] {
    return this.#last;
  }
}
