/**
 * The questions and options a learning service has seen in feedback but
 * its bundle has not learned yet: a question the model was asked about
 * before any bundle had it, or an option the model answered that the
 * bundle lacks (a new product, the model's own "none of these"). Each is
 * learned at the next retrain; until then the service answers it
 * uncertified with a best guess from these counts (`unlearnedAssessment`).
 *
 * Bounded: at most `MAX_QUESTIONS` questions, `MAX_OPTIONS` options per
 * question and names of at most `MAX_NAME_CHARS` characters are kept (the
 * feedback beyond them is still logged and learned from at the retrain).
 *
 * @module
 */

import type { Table, UnlearnedQuestion } from "../engine/mod.ts";

/** Most questions kept. */
export const MAX_QUESTIONS = 256;
/** Most options kept per question. */
export const MAX_OPTIONS = 2048;
/** Longest question or option name kept. */
export const MAX_NAME_CHARS = 200;

interface Entry {
  kind: "choice" | "yes_no";
  options: string[];
  index: Map<string, number>;
  counts: number[];
}

/** Questions and options seen in feedback (see the module doc). */
export class QuestionRegistry {
  readonly #entries = new Map<string, Entry>();

  /** Questions kept. */
  get size(): number {
    return this.#entries.size;
  }

  /** The names kept, in the order first seen. */
  names(): string[] {
    return [...this.#entries.keys()];
  }

  /**
   * Counts one answer of the model to `question`: yes/no for a boolean, a
   * choice for a string. Returns false (nothing kept) when the answer is of
   * the other kind than the question's first answers, or past the bounds.
   */
  observe(question: string, answer: string | boolean): boolean {
    let e = this.#entries.get(question);
    const kind = typeof answer === "boolean" ? "yes_no" : "choice";
    if (e === undefined) {
      if (
        this.#entries.size >= MAX_QUESTIONS ||
        question.length > MAX_NAME_CHARS
      ) return false;
      e = {
        kind,
        options: kind === "yes_no" ? ["true", "false"] : [],
        index: new Map(kind === "yes_no" ? [["true", 0], ["false", 1]] : []),
        counts: kind === "yes_no" ? [0, 0] : [],
      };
      this.#entries.set(question, e);
    }
    if (e.kind !== kind) return false;
    const name = String(answer);
    let at = e.index.get(name);
    if (at === undefined) {
      if (e.options.length >= MAX_OPTIONS || name.length > MAX_NAME_CHARS) {
        return false;
      }
      at = e.options.length;
      e.options.push(name);
      e.index.set(name, at);
      e.counts.push(0);
    }
    e.counts[at]!++;
    return true;
  }

  /**
   * Sets what is known of `question` as a log holds it (its kind, options
   * and answers per option), replacing what was counted before; past the
   * bounds, nothing is kept.
   */
  set(
    question: string,
    kind: "choice" | "yes_no",
    options: readonly string[],
    counts: readonly number[],
  ): void {
    if (
      question.length > MAX_NAME_CHARS ||
      (!this.#entries.has(question) && this.#entries.size >= MAX_QUESTIONS)
    ) return;
    const kept = options.slice(0, MAX_OPTIONS);
    this.#entries.set(question, {
      kind,
      options: [...kept],
      index: new Map(kept.map((o, i) => [o, i])),
      counts: kept.map((_, i) => counts[i] ?? 0),
    });
  }

  /** The kind of `question` as its answers so far say; undefined when never seen. */
  kindOf(question: string): "choice" | "yes_no" | undefined {
    return this.#entries.get(question)?.kind;
  }

  /** What is known of `question`, for `unlearnedAssessment`; undefined when never seen. */
  get(question: string): UnlearnedQuestion | undefined {
    const e = this.#entries.get(question);
    return e === undefined
      ? undefined
      : { kind: e.kind, options: e.options, counts: e.counts };
  }

  /**
   * Forgets what `table` has learned: its questions (their feedback is the
   * bundle's to answer now) and, of a choice question, the options it has.
   */
  learned(table: Table): void {
    for (const q of table.questions) this.#entries.delete(q.name);
  }
}
