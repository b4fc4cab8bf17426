/**
 * The second tier's novelty score, chosen by measurement: the squared
 * Mahalanobis distance to the nearest option mean (shared covariance, the
 * guard `train --semantic` uses) against the cosine distance to the
 * nearest training text, in the encoder's space. For 15 BANKING77 options
 * held out of training (draws 1-2), the reference is 80% of the kept
 * options' `train.csv` texts and the threshold the score above all but 5%
 * of the other 20% (as the conformal guard at 0.05 sets it); printed: the
 * share of texts each score withholds among `test.csv`'s kept options (in
 * scope: about 5% by construction), the held-out options' texts and NLU++
 * hotel requests.
 *
 * Then the cost per text of each score as serving computes it: the
 * Mahalanobis score (a 512 x 512 projection, then the option means) and
 * the nearest-text score over the fit texts stored as bytes
 * (`engine/nearest.ts`), at 2,000 and 4,000 stored texts (`NEAREST_MAX`).
 *
 * Usage: deno task bench:novelty [--embed-cache FILE]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { DATA, EMBED_CACHE_OPTION, exitWithoutData } from "./bench_data.ts";
import { noveltyScore } from "../src/engine/semantic.ts";
import {
  nearestDistance as storedNearest,
  quantizeTexts,
} from "../src/engine/nearest.ts";
import { seededRandom } from "../src/engine/random.ts";
import { percent as pct } from "../src/format.ts";
import { noveltyReference } from "../src/train/semantic_fit.ts";
import { drawOptions, keepOptions, readPublicData } from "./proxies.ts";
import { embedTexts } from "./semantic_eval.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    "embed-cache": EMBED_CACHE_OPTION,
  },
});
await exitWithoutData();
const cache = values["embed-cache"];
const d = await readPublicData(DATA);
const hotels = await embedTexts(d.nlu.hotels.map((r) => r.text), cache);

function unit(v: Float32Array): Float32Array {
  let s = 0;
  for (const x of v) s += x * x;
  const n = Math.sqrt(s) || 1;
  return v.map((x) => x / n);
}

/** 1 - the largest cosine to a reference text. */
function nearestDistance(ref: Float32Array[], v: Float32Array): number {
  const u = unit(v);
  let best = -1;
  for (const r of ref) {
    let s = 0;
    for (let i = 0; i < u.length; i++) s += u[i]! * r[i]!;
    if (s > best) best = s;
  }
  return 1 - best;
}

function above(scores: number[], t: number): number {
  return scores.filter((s) => s > t).length / scores.length;
}

console.log(
  "== Novelty scores in the encoder's space, each at the level that withholds 5% of held-aside in-scope texts",
);
for (const seed of [1, 2]) {
  const held = drawOptions(d.categories, 15, seed);
  const keep = new Set(d.categories.filter((c) => !held.has(c)));
  const train = keepOptions(d.bankTrain, keep).kept;
  const inScope = keepOptions(d.bankTest, keep).kept;
  const out = keepOptions(d.bankTest, keep).others;
  const e = await embedTexts(train.texts, cache);
  const random = seededRandom(seed);
  const aside = train.texts.map(() => random() < 0.2);
  const ref = train.texts.map((_, i) => i).filter((i) => !aside[i]);
  const cal = train.texts.map((_, i) => i).filter((i) => aside[i]);
  const q = train.questions[0]!;
  const maha = noveltyReference(
    e,
    q.labels,
    ref,
    q.options.length,
    512,
    0.2,
    0.05,
  );
  const refUnits = ref.map((i) => unit(e[i]!));
  const scorers: [string, (v: Float32Array) => number][] = [
    ["Mahalanobis to the nearest option mean", (v) => noveltyScore(maha, v)],
    [
      "cosine distance to the nearest training text",
      (v) => nearestDistance(refUnits, v),
    ],
  ];
  const inE = await embedTexts(inScope.texts, cache);
  const outE = await embedTexts(out, cache);
  for (const [name, score] of scorers) {
    const calScores = cal.map((i) => score(e[i]!)).sort((a, b) => a - b);
    const t = calScores[Math.floor(0.95 * calScores.length)]!;
    console.log(
      `  draw ${seed}, ${name}: withholds ${
        pct(above(inE.map(score), t))
      } of in-scope texts, ${
        pct(above(outE.map(score), t))
      } of held-out options' texts, ${
        pct(above(hotels.map(score), t))
      } of hotel requests`,
    );
  }
}

console.log(
  "== Cost per text as served (draw 1's reference, 1,000 test texts)",
);
{
  const held = drawOptions(d.categories, 15, 1);
  const keep = new Set(d.categories.filter((c) => !held.has(c)));
  const train = keepOptions(d.bankTrain, keep).kept;
  const e = await embedTexts(train.texts, cache);
  const probe = (await embedTexts(d.bankTest.texts, cache)).slice(0, 1000);
  const q = train.questions[0]!;
  const all = train.texts.map((_, i) => i);
  const maha = noveltyReference(
    e,
    q.labels,
    all,
    q.options.length,
    512,
    0.2,
    0.05,
  );
  const time = (f: (v: Float32Array) => number) => {
    for (const v of probe.slice(0, 50)) f(v);
    const t0 = performance.now();
    let sink = 0;
    for (const v of probe) sink += f(v);
    return [(performance.now() - t0) / probe.length, sink] as const;
  };
  const [mahaMs] = time((v) => noveltyScore(maha, v));
  console.log(
    `  Mahalanobis to the nearest option mean: ${mahaMs.toFixed(3)} ms a text`,
  );
  for (const stored of [2000, 4000]) {
    const ref = {
      dim: 512,
      ...quantizeTexts(e, all.slice(0, stored), 512),
      scores: new Float32Array(0),
    };
    const [ms] = time((v) => storedNearest(ref, v));
    console.log(
      `  nearest of ${stored} stored texts (${
        ((stored * 516) / 1e6).toFixed(1)
      } MB): ${ms.toFixed(3)} ms a text (${
        (ms / mahaMs).toFixed(1)
      }x the Mahalanobis score)`,
    );
  }
}
