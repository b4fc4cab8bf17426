/**
 * Shared by the benchmarks of the second tier: embeddings through a cache
 * file, and answering texts with both tiers as a server that asks the
 * second tier will (the threshold in force is the two-tier rule's; the
 * table first; the second tier where the table's only failing rule is
 * `low_confidence`), or with the table alone as today's server does.
 *
 * @module
 */

import {
  type Answer,
  Answerer,
  QUIET_GUARD,
  type Table,
} from "../src/engine/mod.ts";
import { embedTraces } from "../src/train/embed.ts";
import { ProgressPrinter } from "../src/cli/progress.ts";
import type { TraceSet } from "../src/traces/mod.ts";

/**
 * Embeds texts through the cache file `path` (made or extended), on a pool
 * of 2 workers, as `train --semantic` does (progress on stderr).
 */
export function embedTexts(
  texts: readonly string[],
  path: string,
): Promise<Float32Array[]> {
  return embedTraces(texts, path, 2, new ProgressPrinter());
}

/** One text's verdict: certified or not, by which tier, and the answer answerer. */
export interface TierAnswer {
  certified: boolean;
  tier: "table" | "semantic" | null;
  /** The option answerer (yes/no: "true" or "false"). */
  option: string;
}

/**
 * Answers question `name` for every text: with both tiers when
 * `embeddings` are given and the question has a second tier, else with the
 * table alone at its own threshold.
 */
export function answerTexts(
  table: Table,
  name: string,
  texts: readonly string[],
  embeddings: readonly Float32Array[] | null,
): TierAnswer[] {
  const answerer = new Answerer(table, { secondTier: embeddings !== null });
  return texts.map((text, i) => {
    const prepared = answerer.prepare(text);
    const a = answerer.answer(prepared, name, {}, QUIET_GUARD);
    if (a.answer.certified) {
      return { certified: true, tier: "table", option: optionOf(a.answer) };
    }
    if (embeddings !== null && answerer.asksSecondTier(a, false)) {
      const r = answerer.answerWithSecondTier(
        a,
        embeddings[i]!,
        answerer.tableInput(a, prepared),
      );
      const answer = r.assessment.answer;
      if (answer.certified) {
        return { certified: true, tier: r.tier, option: optionOf(answer) };
      }
    }
    return { certified: false, tier: null, option: optionOf(a.answer) };
  });
}

function optionOf(a: Answer): string {
  return a.kind === "choice"
    ? a.choice
    : a.kind === "yes_no"
    ? String(a.answer)
    : "";
}

/** Certified share, disagreement among certified, and the share the second tier certified. */
export interface TwoTierFigures {
  certified: number;
  disagreement: number | null;
  bySemantic: number;
}

/** Answers every answered trace of `set` for question `name` (its first by default) and measures. */
export function twoTierFigures(
  table: Table,
  set: TraceSet,
  embeddings: readonly Float32Array[] | null,
  name = set.questions[0]!.name,
): TwoTierFigures {
  const q = set.questions.find((x) => x.name === name)!;
  const answers = answerTexts(table, name, set.texts, embeddings);
  let n = 0;
  let certified = 0;
  let wrong = 0;
  let bySemantic = 0;
  answers.forEach((a, i) => {
    const label = q.labels[i]!;
    if (label < 0) return;
    n++;
    if (!a.certified) return;
    certified++;
    if (a.tier === "semantic") bySemantic++;
    if (a.option !== q.options[label]) wrong++;
  });
  return {
    certified: n === 0 ? 0 : certified / n,
    disagreement: certified === 0 ? null : wrong / certified,
    bySemantic: n === 0 ? 0 : bySemantic / n,
  };
}

/** The share of `texts` certified (for texts of none of the options). */
export function certifiedShare(
  table: Table,
  name: string,
  texts: readonly string[],
  embeddings: readonly Float32Array[] | null,
): number {
  const answers = answerTexts(table, name, texts, embeddings);
  return answers.length === 0
    ? 0
    : answers.filter((a) => a.certified).length / answers.length;
}
