/**
 * Whether an option the model answers, that a question's bundle lacks, is
 * a change of the traffic or sampling.
 *
 * A question whose bundle learned from `N` of its labels can still meet an
 * option it never saw: one rare enough to be missing from `N` draws. That
 * is sampling: the traffic is as before, its calibration stands (the texts
 * of that option were always part of it, and any disagreement they cause
 * was counted), and the option is learned at the next retrain. A product
 * launched mid-stream is a change: the option comes again and again from
 * then on, far more often than `N` draws without it allow, and the
 * question is held until it is calibrated on the traffic since.
 *
 * The test, per option: from the first label naming it, count the
 * question's labels `m` and those among them naming it, `k` (the first
 * sighting itself left out: it only starts the count). If the traffic did not change, each such label was as likely to
 * fall among the `N` before as among the `m` since, so all `k` falling
 * since has probability `(m / (N + m))^k`; at `CHANGE_P` or below the
 * traffic changed. One stray label (`k` = 0) never crosses it, however
 * many labels came before; a launch whose options make a percent of the
 * traffic crosses it within a few hundred labels of a question with
 * thousands.
 *
 * Pure: it counts what it is told.
 *
 * @module
 */

/** At or below this probability of its sightings under unchanged traffic, an added option is a change. */
export const CHANGE_P = 0.001;

/**
 * The probability, under unchanged traffic, that all `k` labels naming an
 * option the bundle lacks fall among the `m` since its first sighting
 * rather than the `before` labels before it (see the module doc).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { changeP } from "./option_change.ts";
 * // One stray label: nothing to go on.
 * assert.equal(changeP(5000, 300, 0), 1);
 * // Three more in the next 300 labels of a question with 5,000: a launch.
 * assert.ok(changeP(5000, 300, 3) < 0.001);
 * // The same three with 300 labels before: could be sampling.
 * assert.ok(changeP(300, 300, 3) > 0.1);
 * ```
 */
export function changeP(before: number, since: number, k: number): number {
  if (k <= 0) return 1;
  return Math.pow(since / Math.max(1, before + since), k);
}

/** One option's count since its first sighting. */
interface Watch {
  before: number;
  since: number;
  sightings: number;
}

/** Most options watched per question (the rest wait for a watch to end). */
export const MAX_WATCHED = 256;

/**
 * The watch over options each question's bundle lacks (see the module
 * doc), each option on its own: a stray label of one option never delays
 * what the labels of another show.
 */
export class OptionChangeWatch {
  readonly #watches = new Map<string, Map<string, Watch>>();

  /**
   * Counts one label of `question`, which had `before` labels so far:
   * `added` names the option when the bundle lacks it, null otherwise.
   * Returns the option whose sightings show the traffic changed with this
   * label (the watch on the question then ends), or null.
   */
  observe(
    question: string,
    before: number,
    added: string | null,
  ): string | null {
    let watches = this.#watches.get(question);
    if (watches === undefined) {
      if (added === null) return null;
      this.#watches.set(question, watches = new Map());
    }
    let found: string | null = null;
    for (const [option, w] of watches) {
      w.since++;
      if (option !== added) continue;
      w.sightings++;
      if (changeP(w.before, w.since, w.sightings) <= CHANGE_P) found = option;
    }
    if (
      added !== null && !watches.has(added) && watches.size < MAX_WATCHED
    ) {
      watches.set(added, { before, since: 0, sightings: 0 });
    }
    if (found !== null) this.#watches.delete(question);
    return found;
  }

  /** The options of `question` seen so far that its bundle lacks, while it is watched (empty otherwise). */
  options(question: string): string[] {
    return [...(this.#watches.get(question)?.keys() ?? [])];
  }

  /** Ends the watch on each option of `question` that `learned` says its bundle now has. */
  settle(question: string, learned: (option: string) => boolean): void {
    const watches = this.#watches.get(question);
    if (watches === undefined) return;
    for (const option of [...watches.keys()]) {
      if (learned(option)) watches.delete(option);
    }
    if (watches.size === 0) this.#watches.delete(question);
  }

  /** The questions watched now. */
  questions(): string[] {
    return [...this.#watches.keys()];
  }
}
