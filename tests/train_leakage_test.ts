/**
 * The leakage check: near-twins of calibration texts in the train split, the
 * accuracy gap they open, the warning, and the subsample that keeps the
 * check cheap on large logs.
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  calibrationTwins,
  leakageCheck,
  NOT_CHECKED,
} from "../src/train/leakage.ts";
import { CALIBRATION, FIT, TEST, VALIDATION } from "../src/train/split.ts";

Deno.test("calibrationTwins() flags calibration texts with a near-twin in the train split only", () => {
  const texts = [
    "my card was stolen yesterday in the street", // fit
    "where is my refund for the broken chair", // validation
    "my card was stolen yesterday in the street today", // calibration: twin of 0
    "how do I change the pin of my account", // calibration: no twin
    "where is my refund for the broken chair please", // test: never flagged
  ];
  const parts = Uint8Array.of(FIT, VALIDATION, CALIBRATION, CALIBRATION, TEST);
  assert.deepEqual([...calibrationTwins(texts, parts, 0.8)], [0, 0, 1, 0, 0]);
});

Deno.test("calibrationTwins() checks an even subsample of a large calibration part, and leakageCheck() counts only those", () => {
  const texts: string[] = [];
  const parts: number[] = [];
  for (let i = 0; i < 50; i++) {
    texts.push(`alpha${i} beta${i} gamma${i} delta${i}`);
    parts.push(FIT);
  }
  for (let i = 0; i < 100; i++) {
    // Even calibration texts are twins of a train text, odd ones are new.
    texts.push(
      i % 2 === 0
        ? `alpha${i / 2} beta${i / 2} gamma${i / 2} delta${i / 2} now`
        : `unseen${i} words${i} here${i}`,
    );
    parts.push(CALIBRATION);
  }
  const twins = calibrationTwins(texts, Uint8Array.from(parts), 0.8, 10);
  const checked = [...twins.slice(50)].filter((t) => t !== NOT_CHECKED);
  assert.equal(checked.length, 10);
  assert.equal(twins.slice(50).filter((t) => t === NOT_CHECKED).length, 90);
  const indices = Array.from({ length: 100 }, (_, t) => 50 + t);
  const wrong = new Uint8Array(100);
  const r = leakageCheck(indices, wrong, twins, 0.8);
  assert.equal(r.with_twin.answers + r.without_twin.answers, 10);
  assert.equal(r.with_twin.answers, checked.filter((t) => t === 1).length);
});

Deno.test("leakageCheck() warns when twins are clearly easier and many, and not when the gap is small", () => {
  const n = 1000;
  const indices = Array.from({ length: n }, (_, i) => i);
  const twins = Uint8Array.from(indices, (i) => i < 400 ? 1 : 0);
  // Twins always right; the others wrong one time in ten.
  const wrong = Uint8Array.from(
    indices,
    (i) => i >= 400 && i % 10 === 0 ? 1 : 0,
  );
  const warned = leakageCheck(indices, wrong, twins, 0.8);
  assert.ok(warned.optimism! >= 0.02);
  assert.match(warned.warning ?? "", /near-twin.*"time" or "group"/s);
  // The same gap on 2% of the answers: too little optimism to warn.
  const few = Uint8Array.from(indices, (i) => i < 20 ? 1 : 0);
  const quiet = leakageCheck(
    indices,
    wrong.map((w, i) => i < 20 ? 0 : w),
    few,
    0.8,
  );
  assert.equal(quiet.warning, null);
});
