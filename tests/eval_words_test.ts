/**
 * `eval`'s words: why answers were not certified names out-of-scope and
 * novelty as what they are (single texts unlike the calibration texts),
 * never as drift, and the per-option table is sorted by label.
 */

import assert from "node:assert/strict";
import {
  notCertifiedLine,
  optionLines,
  whyNotCertified,
} from "../src/cli/eval_words.ts";
import { QuestionTally } from "../src/eval/mod.ts";
import type { EvalFigures } from "../src/eval/mod.ts";

Deno.test("eval names out-of-scope and novelty without calling them drift; only the online alarm is drift", () => {
  const held = {
    not_certified: { low_confidence: 200, drift: 100 },
    drift_rules: { out_of_scope: 66, novelty: 34 },
  } as unknown as EvalFigures;
  const line = notCertifiedLine(held);
  assert.equal(
    line,
    "  not certified: low_confidence 200, out_of_scope 66 (looks like none of the options), novelty 34 (mostly words never seen in training)",
  );
  assert.doesNotMatch(line, /drift/);
  const streamed = whyNotCertified({
    not_certified: { drift: 12, low_confidence: 5 },
    drift_rules: { alarm: 10, novelty: 2 },
  });
  assert.deepEqual(streamed.map((w) => [w.reason, w.count]), [
    ["drift alarm", 10],
    ["low_confidence", 5],
    ["novelty", 2],
  ]);
});

Deno.test("the per-option table and the figures list options by label, as scikit-learn does", () => {
  const tally = new QuestionTally(["zeta", "alpha", "mu"]);
  const f = tally.result([], null, 0.05);
  assert.deepEqual(Object.keys(f.options), ["alpha", "mu", "zeta"]);
  // Given out of order, printed in order.
  const lines = optionLines({
    zeta: f.options.zeta!,
    alpha: f.options.alpha!,
    mu: f.options.mu!,
  });
  assert.deepEqual(
    lines.slice(1).map((l) => l.trim().split(/\s+/)[0]),
    ["alpha", "mu", "zeta"],
  );
});
