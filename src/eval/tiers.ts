/**
 * `eval` by tier, for a bundle with a second tier: each trace answered as
 * `serve` answers it (the table first; the second tier where the table
 * withholds for low confidence alone, on the text's embedding), and per
 * question the answers, certified answers and their disagreements by the
 * tier that answered.
 *
 * @module
 */

import {
  type Answerer,
  type AnsweringTier,
  type Assessment,
  disagrees,
  type PreparedText,
} from "../engine/mod.ts";

/** One tier's figures for a question. */
export interface TierFigures {
  answers: number;
  certified: number;
  /** Certified answers that disagree with the trace's. */
  disagreements: number;
  /** `disagreements / certified`; null without certified answers. */
  disagreement: number | null;
}

/** A question's figures by tier (`eval --json`: `questions.Q.tiers`). */
export interface TiersFigures {
  table: TierFigures;
  semantic: TierFigures & {
    /** Answers the second tier was asked for. */
    asked: number;
    /** Of them, withheld by its novelty guard (the table's answer stood). */
    novel: number;
  };
}

interface Counts {
  answers: number;
  certified: number;
  disagreements: number;
}

/** Counts one question's answers by tier. */
export class TierTally {
  readonly #counts: Record<AnsweringTier, Counts> = {
    table: { answers: 0, certified: 0, disagreements: 0 },
    semantic: { answers: 0, certified: 0, disagreements: 0 },
  };
  #asked = 0;
  #novel = 0;

  /** Counts `a`, given by `tier`, against the trace's answer `expected`. */
  add(a: Assessment, tier: AnsweringTier, expected: string): void {
    const c = this.#counts[tier];
    c.answers++;
    if (a.answer.certified) {
      c.certified++;
      if (disagrees(a.answer, expected)) c.disagreements++;
    }
  }

  /** Counts one answer the second tier was asked for (`novel`: its guard withheld it). */
  asked(novel: boolean): void {
    this.#asked++;
    if (novel) this.#novel++;
  }

  /** The figures. */
  result(): TiersFigures {
    const f = (c: Counts): TierFigures => ({
      ...c,
      disagreement: c.certified === 0 ? null : c.disagreements / c.certified,
    });
    return {
      table: f(this.#counts.table),
      semantic: {
        ...f(this.#counts.semantic),
        asked: this.#asked,
        novel: this.#novel,
      },
    };
  }
}

/**
 * The answer `serve` gives for `assessment` (the table's, from
 * `answerer.answer` on a prepared `text`) with the second tier on and
 * `embedding` the text's, and the tier that gave it; counted in `tally`.
 * The second tier's threshold is its bundle's `L` (no live evidence in
 * eval).
 */
export function answerAsServed(
  answerer: Answerer,
  text: PreparedText,
  assessment: Assessment,
  embedding: Float32Array | undefined,
  tally: TierTally,
): { assessment: Assessment; tier: AnsweringTier } {
  if (embedding === undefined || !answerer.asksSecondTier(assessment, false)) {
    return { assessment, tier: "table" };
  }
  const r = answerer.answerWithSecondTier(
    assessment,
    embedding,
    answerer.tableInput(assessment, text),
  );
  tally.asked(r.tier === "table");
  return r;
}
