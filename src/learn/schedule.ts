/**
 * When a learning service retrains: on the evidence, not the clock. The
 * first retrain comes once `FIRST_LABELS` labels are in (a question needs a
 * few hundred answers before anything can be certified); each next one
 * once the labels have grown by `GROWTH` since the last, and not sooner
 * than a pause that grows with the labels (a retrain on a large log takes
 * a while and changes little between two close ones): `PAUSE_PER_LABEL_MS`
 * per label, at most `MAX_PAUSE_MS`.
 *
 * Once the model began answering options a question's table lacked, only
 * the labels since that change calibrate it (the census while it is held,
 * then the uncertified answers and audits), so the growth is also counted
 * on them: a retrain `FIRST_LABELS` labels after the change, then each
 * time the labels since it grew by `GROWTH`, whichever comes first. After
 * a change the retrains therefore come as often as the evidence that
 * calibrates grows, not as slowly as the whole log grows.
 *
 * With a second tier asked for, the new texts are embedded ahead of a
 * retrain (`embedAheadDue`) only while no retrain is near: an embedding
 * holds the next retrain back until it ends.
 *
 * @module
 */

/** Labels before the first retrain. */
export const FIRST_LABELS = 300;
/** Growth of the labels that asks for a retrain: a quarter more. */
export const GROWTH = 1.25;
/** Pause after a retrain per label it had, in ms. */
export const PAUSE_PER_LABEL_MS = 2;
/** Longest pause between two retrains: 5 minutes. */
export const MAX_PAUSE_MS = 5 * 60 * 1000;
/** Labels between two embeddings ahead of a retrain (a second tier asked for). */
export const EMBED_AHEAD_LABELS = 1000;
/** Pause left that still lets an embedding run ahead of a retrain due by its labels: a minute. */
export const EMBED_AHEAD_PAUSE_MS = 60 * 1000;

/** Where the schedule stands. */
export interface ScheduleState {
  /** Labels in the log now. */
  labels: number;
  /** Labels the last retrain had (0 before any). */
  lastLabels: number;
  /** When the last retrain ended, ms (−Infinity before any). */
  lastAt: number;
  /** Now, ms. */
  now: number;
  /** The labels in the log when a question's traffic changed (none changed: undefined). */
  changedLabels?: number | undefined;
}

/**
 * The labels at which the next retrain is due (see the module doc):
 * growth on the whole log, or on the labels since `changedLabels` once a
 * question's traffic changed, whichever comes first.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { nextRetrainLabels } from "./schedule.ts";
 * assert.equal(nextRetrainLabels(0), 300);
 * assert.equal(nextRetrainLabels(1000), 1250);
 * // Held since 5,000 labels, last retrained at 5,100: due at 5,300, not 6,375.
 * assert.equal(nextRetrainLabels(5100, 5000), 5300);
 * assert.equal(nextRetrainLabels(5400, 5000), 5500);
 * ```
 */
export function nextRetrainLabels(
  lastLabels: number,
  changedLabels?: number,
): number {
  const whole = lastLabels === 0
    ? FIRST_LABELS
    : Math.max(FIRST_LABELS, Math.ceil(lastLabels * GROWTH));
  if (changedLabels === undefined) return whole;
  const since = Math.max(0, lastLabels - changedLabels);
  return Math.min(whole, changedLabels + nextRetrainLabels(since));
}

/** The pause after a retrain on `labels` labels, in ms. */
export function pauseAfter(labels: number): number {
  return Math.min(MAX_PAUSE_MS, labels * PAUSE_PER_LABEL_MS);
}

/**
 * True when a retrain is due: the labels reached `nextRetrainLabels` and
 * the pause after the last retrain is over.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { retrainDue } from "./schedule.ts";
 * assert.equal(retrainDue({ labels: 299, lastLabels: 0, lastAt: -Infinity, now: 0 }), false);
 * assert.equal(retrainDue({ labels: 300, lastLabels: 0, lastAt: -Infinity, now: 0 }), true);
 * // Grown enough, but 100,000 labels ask for a pause of 200 s after the last.
 * assert.equal(retrainDue({ labels: 150_000, lastLabels: 100_000, lastAt: 0, now: 100_000 }), false);
 * ```
 */
export function retrainDue(s: ScheduleState): boolean {
  return s.labels >= nextRetrainLabels(s.lastLabels, s.changedLabels) &&
    s.now >= s.lastAt + pauseAfter(s.lastLabels);
}

/**
 * True when the log's new texts are worth embedding ahead of the next
 * retrain: `EMBED_AHEAD_LABELS` labels came since the cache last took the
 * log's texts (`embeddedAt`: an embedding ahead, or a retrain's pass with
 * the encoder), and no retrain is near: the labels have not reached the
 * next retrain's, or the pause still holds it back for
 * `EMBED_AHEAD_PAUSE_MS` or more. A retrain due in a moment starts at once
 * rather than waiting for an embedding its own pass would make anyway.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { embedAheadDue } from "./schedule.ts";
 * // 1,900 labels, retrained on 861 a second ago: the retrain is due once
 * // its 1.7 s pause is over, so nothing is embedded ahead of it.
 * assert.equal(embedAheadDue({ labels: 1900, lastLabels: 861, lastAt: 0, now: 1000 }, 861), false);
 * // 1,100 labels after a retrain on 1,000: the next is due at 1,250.
 * assert.equal(embedAheadDue({ labels: 2100, lastLabels: 2000, lastAt: 0, now: 1000 }, 1000), true);
 * ```
 */
export function embedAheadDue(s: ScheduleState, embeddedAt: number): boolean {
  if (s.labels < embeddedAt + EMBED_AHEAD_LABELS) return false;
  if (s.labels < nextRetrainLabels(s.lastLabels, s.changedLabels)) return true;
  return s.lastAt + pauseAfter(s.lastLabels) - s.now >= EMBED_AHEAD_PAUSE_MS;
}
