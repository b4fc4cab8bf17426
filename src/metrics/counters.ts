/**
 * Answer counters: totals, per flag and per bundle question, kept in typed
 * arrays indexed by flag position (`FLAGS`) so that counting an answer
 * allocates nothing. Answers for names the bundle does not know count in
 * the totals (under `unsupported`) only.
 *
 * @module
 */

import { type Flag, FLAGS } from "../engine/mod.ts";

const FLAG_INDEX: Record<Flag, number> = Object.fromEntries(
  FLAGS.map((f, i) => [f, i]),
) as Record<Flag, number>;

/** The counts of one set of answers (all of them, or one question's). */
export class AnswerCounts {
  answers = 0;
  certified = 0;
  /** Per flag, by its position in `FLAGS`. */
  readonly flags: Float64Array = new Float64Array(FLAGS.length);

  /** Counts one answer. */
  count(certified: boolean, flag: Flag | null): void {
    this.answers++;
    if (certified) this.certified++;
    else if (flag !== null) this.flags[FLAG_INDEX[flag]]!++;
  }

  /** The flags seen, by name, in `FLAGS` order (only those counted at least once). */
  flagCounts(): [Flag, number][] {
    const out: [Flag, number][] = [];
    for (let i = 0; i < FLAGS.length; i++) {
      if (this.flags[i]! > 0) out.push([FLAGS[i]!, this.flags[i]!]);
    }
    return out;
  }
}

/** Responses counted by route label and status code. */
export class ResponseCounts {
  readonly #labels: readonly string[];
  readonly #labelIndex: Map<string, number>;
  /** Count per `labelIndex * 1000 + status`. */
  readonly #counts = new Map<number, number>();
  #errors = 0;

  /** Counts for the given route labels (anything else counts as the last label). */
  constructor(labels: readonly string[]) {
    this.#labels = labels;
    this.#labelIndex = new Map(labels.map((l, i) => [l, i]));
  }

  /** Counts one response; 4xx and 5xx also count as errors. */
  count(label: string, status: number): void {
    const i = this.#labelIndex.get(label) ?? this.#labels.length - 1;
    const key = i * 1000 + status;
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
    if (status >= 400) this.#errors++;
  }

  /** Responses with a status of 400 or more. */
  get errors(): number {
    return this.#errors;
  }

  /** Every count, as route label, status and count, sorted by label then status. */
  entries(): [string, number, number][] {
    const out: [string, number, number][] = [];
    for (const [key, n] of this.#counts) {
      out.push([this.#labels[Math.floor(key / 1000)]!, key % 1000, n]);
    }
    return out.sort((a, b) => a[0].localeCompare(b[0]) || a[1] - b[1]);
  }
}
