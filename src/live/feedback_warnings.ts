/**
 * What the operator is told, on stderr, when feedback goes wrong in a way
 * the answers served do not show: a question's feedback turned suspect
 * (the feedback check's alarms: a proxy that lies or echoes, or a model
 * that changed), and feedback that comes without the ids its answers
 * carried (which costs a learner its calibration picks). Each is said once
 * and again only when it grows, so a flood does not flood the log.
 *
 * @module
 */

import type { LiveCertificate } from "../guarantee/mod.ts";
import { AGREES_TOO_MUCH, DISAGREES_TOO_MUCH } from "../guarantee/mod.ts";

/** The lines told to `warn` (nothing without one). */
export class FeedbackWarnings {
  readonly #warn: ((line: string) => void) | undefined;
  /** Per certificate, the feedback alarms told already. */
  readonly #told = new WeakMap<LiveCertificate, number>();
  /**
   * Feedback items sent without the id their decision carried, and the
   * picks expected among them (the sum of their rates: which ones were
   * picked is not told).
   */
  readonly idless = { items: 0, picksExpected: 0 };

  /** Warnings told to `warn`. */
  constructor(warn: ((line: string) => void) | undefined) {
    this.#warn = warn;
  }

  /**
   * Says once each feedback alarm `certificate` of question `name` raised
   * since it was last told; an alarm a reset cleared is told again when
   * raised again.
   */
  suspect(name: string, certificate: LiveCertificate): void {
    const alarms = certificate.alarms;
    const told = (this.#told.get(certificate) ?? 0) & alarms;
    if ((alarms & ~told) === 0) return;
    this.#told.set(certificate, alarms | told);
    this.#warn?.(suspectFeedbackWords(name, alarms & ~told));
  }

  /**
   * Counts one item sent without the id its decision carried, picked at
   * `rate`; says so at the 1st, 100th and 10,000th.
   */
  noteIdless(rate: number): void {
    const n = ++this.idless.items;
    this.idless.picksExpected += rate;
    if (n !== 1 && n !== 100 && n !== 10_000) return;
    this.#warn?.(
      `feedback came without the feedback_id its decision carried (${n} ${
        n === 1 ? "item" : "items"
      } so far): a label without its id is not known to answer the decision it picked, so each picked decision answered so (about ${
        Math.max(1, Math.round(this.idless.picksExpected))
      } so far) counts as a disagreement where the next bundle would certify it, and it certifies less. Send back the feedback_id (or audit) each answer carried`,
    );
  }
}

/**
 * What an operator reads when a question's feedback turns suspect:
 * `alarms` holds `DISAGREES_TOO_MUCH` (a liar, or a model that changed)
 * and/or `AGREES_TOO_MUCH` (an echo), and what each does to the answers.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { suspectFeedbackWords } from "./feedback_warnings.ts";
 * assert.match(suspectFeedbackWords("intent", 2), /intent: its feedback disagrees/);
 * ```
 */
export function suspectFeedbackWords(name: string, alarms: number): string {
  const parts: string[] = [];
  if ((alarms & DISAGREES_TOO_MUCH) !== 0) {
    parts.push(
      "its feedback disagrees with the table far more than calibration allows (a proxy that lies, or a model that changed); the disagreements count, so certification moves stricter and is withdrawn if they go on: withholding is the safe side",
    );
  }
  if ((alarms & AGREES_TOO_MUCH) !== 0) {
    parts.push(
      "its feedback agrees with the table far more than calibration allows (a proxy that echoes the table's answers); the threshold in force stays the bundle's or stricter",
    );
  }
  return `feedback turned suspect on ${name}: ${
    parts.join("; and ")
  }. Check what sends POST /v1/feedback, then POST /v1/live/reset`;
}
