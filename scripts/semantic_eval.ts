/**
 * Shared by the benchmarks: embeddings through the cache, and answering
 * held-out traces with both tiers as serving will (the table first; the
 * second tier where the table's only failing rule is `low_confidence`).
 *
 * @module
 */

import { assess, prepareText } from "../src/engine/answer.ts";
import { QUIET_GUARD } from "../src/engine/drift.ts";
import { fullProbabilities, semanticAssess } from "../src/engine/semantic.ts";
import type { Table } from "../src/engine/table.ts";
import { setThresholdInForce, TableState } from "../src/engine/state.ts";
import { disagrees } from "../src/engine/verdict.ts";
import {
  EMBEDDING_SIZE,
  EncoderPool,
  readCache,
  readThisEncoder,
  THIS_ENCODER,
  writeCache,
} from "../src/encoder/mod.ts";
import type { TraceSet } from "../src/traces/types.ts";

/** Embeds texts through the cache file `path` (made or extended), on a pool of 2 workers. */
export async function embedTexts(
  texts: readonly string[],
  path: string,
): Promise<Float32Array[]> {
  const { cache } = await readCache(path, THIS_ENCODER, EMBEDDING_SIZE);
  let pool: EncoderPool | null = null;
  try {
    const out = await cache.embedAll(texts, async (missing) => {
      pool = await EncoderPool.start(await readThisEncoder());
      const t = performance.now();
      const v = await pool.embedAll(missing);
      console.error(
        `embedded ${missing.length} texts in ${
          ((performance.now() - t) / 1000).toFixed(1)
        } s`,
      );
      return v;
    });
    if (cache.added > 0) await writeCache(path, cache);
    return out;
  } finally {
    (pool as EncoderPool | null)?.close();
  }
}

/** Certified share, disagreement among certified, and the share the second tier certified. */
export interface TwoTierFigures {
  certified: number;
  disagreement: number | null;
  bySemantic: number;
}

/** Answers every trace of `set` for its first question with both tiers (or the table alone). */
export function twoTierFigures(
  table: Table,
  set: TraceSet,
  embeddings: readonly Float32Array[] | null,
): TwoTierFigures {
  const state = new TableState(table);
  const q = set.questions[0]!;
  const tq = table.byName.get(q.name)!;
  const threshold = embeddings !== null && tq.semantic !== undefined
    ? tq.semantic.calibration.threshold
    : tq.calibration.threshold;
  // Both tiers are certified against the two-tier rule's threshold.
  setThresholdInForce(table, state, q.name, threshold);
  let n = 0;
  let certified = 0;
  let wrong = 0;
  let bySemantic = 0;
  set.texts.forEach((text, i) => {
    const label = q.labels[i]!;
    if (label < 0) return;
    n++;
    const a = assess(
      table,
      state,
      prepareText(table, state, text),
      q.name,
      {},
      QUIET_GUARD,
    ).answer;
    if (a.certified) {
      certified++;
      if (disagrees(a, q.options[label]!)) wrong++;
      return;
    }
    if (
      embeddings !== null && tq.semantic !== undefined &&
      a.flag === "low_confidence" &&
      threshold !== null
    ) {
      const s = semanticAssess(
        tq.semantic,
        embeddings[i]!,
        undefined,
        fullProbabilities(table, state, prepareText(table, state, text), tq),
      );
      if (!s.novel && s.confidence >= threshold) {
        certified++;
        bySemantic++;
        if (tq.options[s.best] !== q.options[label]) wrong++;
      }
    }
  });
  return {
    certified: n === 0 ? 0 : certified / n,
    disagreement: certified === 0 ? null : wrong / certified,
    bySemantic: n === 0 ? 0 : bySemantic / n,
  };
}
