/**
 * A format-4 bundle for serving tests: the shared small synthetic table
 * with a constructed second tier on its `topic` question (512 numbers, the
 * encoder's size), whose answer does not depend on the text: it always
 * gives `favourite` with probability about 0.99, its novelty guard off, its
 * calibration the table's own (so the threshold in force stays the
 * table's). Which tier answers a text is then decided by the table alone,
 * and what the second tier says is known without reading its numbers.
 *
 * @module
 */

import { writeBundleAtomically } from "../src/bundle/files.ts";
import { EMBEDDING_SIZE } from "../src/encoder/package.ts";
import { assess } from "../src/engine/answer.ts";
import { prepareText } from "../src/engine/prepare.ts";
import { QUIET_GUARD } from "../src/engine/drift.ts";
import { setThresholdInForce, TableState } from "../src/engine/state.ts";
import type { TrainResult } from "../src/train/contents.ts";
import {
  bundleFiles,
  FILLER_WORDS,
  smallTable,
  TOPIC_WORDS,
  TOPICS,
} from "./_fixtures.ts";
import type { SemanticTier, Table } from "../src/engine/table.ts";

/** The second tier's answer to every text. */
export function favouriteOf(table: Table): string {
  return table.byName.get("topic")!.options[1]!;
}

/** The small table with the constructed second tier on `topic`. */
export function twoTierResult(): TrainResult {
  const r = smallTable();
  const q = r.table.questions.find((x) => x.name === "topic")!;
  const k = q.options.length;
  const bias = new Float32Array(k).fill(-6);
  bias[1] = 6;
  const tier: SemanticTier = {
    dim: EMBEDDING_SIZE,
    scale: 1,
    weights: new Float32Array(EMBEDDING_SIZE * k),
    bias,
    temperature: 1,
    tableWeight: 0,
    novelty: {
      projection: new Float32Array(0),
      rank: 0,
      means: new Float32Array(0),
      scores: new Float32Array(0),
      p: 0,
    },
    calibration: structuredClone(q.calibration),
  };
  return withSemanticTier(r, q.name, tier);
}

/** `r` with `tier` as the second tier of its question `name`. */
export function withSemanticTier(
  r: TrainResult,
  name: string,
  tier: SemanticTier,
): TrainResult {
  const questions = r.table.questions.map((x) =>
    x.name === name ? { ...x, semantic: tier } : x
  );
  return {
    ...r,
    table: {
      ...r.table,
      questions,
      byName: new Map(questions.map((x) => [x.name, x])),
    },
  };
}

/** Writes the format-4 bundle to `dir`; returns `dir`. */
export async function writeTwoTierBundle(dir: string): Promise<string> {
  await writeBundleAtomically(dir, await bundleFiles(twoTierResult()));
  return dir;
}

/**
 * Texts of the small table: one its `topic` answer certifies, and one it
 * withholds for low confidence alone (the second tier's case), found by
 * asking the table as a server with the second tier does.
 */
export function tierTexts(): { certified: string; low: string } {
  const { certified, low } = tierTextLists(1, 1);
  return { certified: certified[0]!, low: low[0]! };
}

/**
 * Up to `certified` texts the small table's `topic` answer certifies and
 * `low` texts it withholds for low confidence alone, as `tierTexts` finds
 * them; throws when it finds none of either.
 */
export function tierTextLists(
  certified: number,
  low: number,
): { certified: string[]; low: string[] } {
  const { table } = twoTierResult();
  const state = new TableState(table);
  const q = table.byName.get("topic")!;
  setThresholdInForce(table, state, "topic", q.semantic!.calibration.threshold);
  const flagOf = (text: string) =>
    assess(
      table,
      state,
      prepareText(table, state, text),
      "topic",
      {},
      QUIET_GUARD,
    )
      .answer;
  const out = { certified: [] as string[], low: [] as string[] };
  const words = TOPICS.flatMap((t) => TOPIC_WORDS[t]!.slice(0, 3));
  const candidates = [
    ...TOPICS.map((t) => TOPIC_WORDS[t]!.slice(0, 4).join(" ")),
    ...words.flatMap((a, i) =>
      words.slice(i + 1).map((b) => `${a} ${FILLER_WORDS[i % 5]} ${b}`)
    ),
    ...FILLER_WORDS.map((f, i) =>
      `${f} ${FILLER_WORDS[(i + 3) % FILLER_WORDS.length]}`
    ),
  ];
  for (const text of candidates) {
    const a = flagOf(text);
    if (a.certified && out.certified.length < certified) {
      out.certified.push(text);
    }
    if (a.flag === "low_confidence" && out.low.length < low) out.low.push(text);
    if (out.certified.length === certified && out.low.length === low) break;
  }
  if (out.certified.length === 0 || out.low.length === 0) {
    throw new Error(
      "The small table gave no certified and low-confidence pair",
    );
  }
  return out;
}
