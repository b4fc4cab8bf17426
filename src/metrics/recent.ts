/**
 * The newest decisions, one per answer, in a ring of slots allocated once
 * and overwritten in place. Input text is kept only when asked for at
 * startup, and then cut to `RECENT_TEXT_LIMIT` code units.
 *
 * @module
 */

import { answerOf, type Assessment } from "../engine/mod.ts";
import type { RecentDecision } from "../openapi/mod.ts";

/** How many recent decisions are kept. */
export const RECENT_LIMIT = 50;
/** Longest input text kept per recent decision (with `keepText`), in UTF-16 units. */
export const RECENT_TEXT_LIMIT = 2000;

/**
 * `text` cut to `RECENT_TEXT_LIMIT` code units, as a string of its own: a
 * plain `slice` of a long string is a view that keeps the whole of it (a
 * 1 MB text would stay in memory for a 2,000-unit excerpt).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { keptText, RECENT_TEXT_LIMIT } from "./recent.ts";
 * assert.equal(keptText("x".repeat(1_000_000)).length, RECENT_TEXT_LIMIT);
 * ```
 */
export function keptText(text: string): string {
  if (text.length <= RECENT_TEXT_LIMIT) return text;
  return JSON.parse(JSON.stringify(text.slice(0, RECENT_TEXT_LIMIT)));
}

/** A slot of the ring: the time as a number, the text or null. */
type Slot = Omit<RecentDecision, "at" | "text"> & {
  at: number;
  text: string | null;
};

/** The newest `RECENT_LIMIT` answers. */
export class RecentDecisions {
  readonly #slots: Slot[] = [];
  #next = 0;
  #filled = 0;

  /** An empty ring. */
  constructor() {
    for (let i = 0; i < RECENT_LIMIT; i++) {
      this.#slots.push({
        at: 0,
        route: "/v1/decide",
        question: "",
        answer: null,
        confidence: 0,
        certified: false,
        flag: null,
        radius: null,
        text: null,
      });
    }
  }

  /** Records one answer given at wall time `nowMs`; `text` is null unless kept. */
  record(
    nowMs: number,
    route: string,
    a: Assessment,
    text: string | null,
  ): void {
    const slot = this.#slots[this.#next]!;
    const { answer } = a;
    slot.at = nowMs;
    slot.route = route;
    slot.question = a.question;
    slot.answer = answerOf(answer);
    slot.confidence = answer.confidence;
    slot.certified = answer.certified;
    slot.flag = answer.flag;
    slot.radius = answer.radius;
    slot.text = text;
    this.#next = (this.#next + 1) % RECENT_LIMIT;
    if (this.#filled < RECENT_LIMIT) this.#filled++;
  }

  /** The recent decisions, newest first. */
  list(): RecentDecision[] {
    const out: RecentDecision[] = [];
    for (let i = 1; i <= this.#filled; i++) {
      const slot = this.#slots[(this.#next - i + RECENT_LIMIT) % RECENT_LIMIT]!;
      const { at, text, ...rest } = slot;
      const when = new Date(at).toISOString();
      out.push(
        text === null ? { at: when, ...rest } : { at: when, ...rest, text },
      );
    }
    return out;
  }
}
