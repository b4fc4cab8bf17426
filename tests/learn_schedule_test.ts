/**
 * A learning service's schedule (`src/learn/schedule.ts`): retrains on the
 * evidence's growth, the labels since a change counted while a question is
 * held, a pause that grows with the log; and the calibration coin's rate
 * per question (`rates.ts`).
 */

import assert from "node:assert/strict";
import {
  EMBED_AHEAD_LABELS,
  EMBED_AHEAD_PAUSE_MS,
  embedAheadDue,
  FIRST_LABELS,
  FULL_PRICE,
  GROWTH,
  MAX_RATE,
  nextRetrainLabels,
  pauseAfter,
  rateFor,
  retrainDue,
  TARGET_CALIBRATION,
  THIN_RATE,
} from "../src/learn/mod.ts";

Deno.test("the first retrain comes at FIRST_LABELS labels, each next once the log grew by GROWTH", () => {
  assert.equal(nextRetrainLabels(0), FIRST_LABELS);
  assert.equal(nextRetrainLabels(100), FIRST_LABELS);
  assert.equal(nextRetrainLabels(4000), Math.ceil(4000 * GROWTH));
  const at = (labels: number, lastLabels: number) =>
    retrainDue({ labels, lastLabels, lastAt: -Infinity, now: 0 });
  assert.equal(at(FIRST_LABELS - 1, 0), false);
  assert.equal(at(FIRST_LABELS, 0), true);
  assert.equal(at(4999, 4000), false);
  assert.equal(at(5000, 4000), true);
});

Deno.test("while a question is held, growth is counted on the labels since the change as well", () => {
  // Held at 5,600 labels; a retrain at 5,700 learned the options but could
  // not calibrate on 100 labels since: the next comes 300 after the
  // change, not at 7,125.
  assert.equal(nextRetrainLabels(5700, 5600), 5600 + FIRST_LABELS);
  // Then by a quarter more of the labels since: 5,900 -> 5,975.
  assert.equal(
    nextRetrainLabels(5900, 5600),
    5600 + Math.ceil(300 * GROWTH),
  );
  // Never later than the whole log's growth would have it.
  assert.equal(nextRetrainLabels(300, 290), 375);
  const held = (labels: number) =>
    retrainDue({
      labels,
      lastLabels: 5700,
      lastAt: -Infinity,
      now: 0,
      changedLabels: 5600,
    });
  assert.equal(held(5899), false);
  assert.equal(held(5900), true);
  assert.equal(
    retrainDue({ labels: 5900, lastLabels: 5700, lastAt: -Infinity, now: 0 }),
    false,
    "without a hold, 5,900 labels are not a quarter more than 5,700",
  );
});

Deno.test("the pause after a retrain grows with its labels, up to five minutes, and holds a due retrain back", () => {
  assert.equal(pauseAfter(1000), 2000);
  assert.equal(pauseAfter(10_000_000), 5 * 60 * 1000);
  const s = { labels: 20_000, lastLabels: 10_000, lastAt: 1_000_000 };
  assert.equal(retrainDue({ ...s, now: 1_000_000 + 19_999 }), false);
  assert.equal(retrainDue({ ...s, now: 1_000_000 + 20_000 }), true);
});

Deno.test("the coin's rate is what the evidence is worth: high while it is thin, the base rate once it is large", () => {
  // A bound that costs a lot (half the answers open, none certified).
  const costly = (calibration: number) => ({
    calibration,
    certified: 0,
    open: calibration / 2,
  });
  assert.equal(rateFor(costly(0), 0.02), THIN_RATE);
  assert.equal(rateFor(costly(100), 0.02), MAX_RATE);
  assert.ok(Math.abs(rateFor(costly(600), 0.02) - 0.1) < 1e-12);
  assert.equal(rateFor(costly(TARGET_CALIBRATION), 0.02), 0.02);
  assert.equal(rateFor(costly(50_000), 0.02), 0.02);
  // A base above the highest rate is kept as asked.
  assert.equal(rateFor(costly(0), 0.3), 0.3);
});

Deno.test("the coin's rate follows the price of the bound: all the evidence is worth while it is large, the base once it is paid", () => {
  // 600 answers (worth 0.1): the certified share against the share a
  // threshold with no bound to pay would certify.
  const priced = (certified: number, open: number) =>
    rateFor({ calibration: 600, certified, open }, 0.02);
  assert.ok(Math.abs(priced(200, 400) - 0.1) < 1e-12); // all it is worth
  assert.equal(priced(400, 400), 0.02); // nothing to buy
  const half = priced(400, 400 + (FULL_PRICE / 2) * 600);
  assert.ok(Math.abs(half - (0.02 + 0.1) / 2) < 1e-9, `${half}`);
  assert.ok(priced(300, 320) < priced(300, 350));
});

Deno.test("texts are embedded ahead of a retrain only while none is near", () => {
  const at = (labels: number, lastLabels: number, sinceMs: number) => ({
    labels,
    lastLabels,
    lastAt: 0,
    now: sinceMs,
  });
  // Fewer than EMBED_AHEAD_LABELS new labels since the cache took the log.
  assert.equal(embedAheadDue(at(1_100, 1_000, 60_000), 1_000), false);
  // A thousand new, the next retrain not due by its labels: embed.
  assert.equal(
    embedAheadDue(at(2_100, 2_000, 60_000), 2_100 - EMBED_AHEAD_LABELS),
    true,
  );
  // Due by its labels with its pause nearly over (a stream in its first
  // minutes): the retrain starts at once, nothing is embedded ahead of it.
  assert.equal(embedAheadDue(at(1_900, 861, 100), 861), false);
  assert.equal(embedAheadDue(at(1_900, 861, 5_000), 0), false);
  // Due by its labels, but a large log's pause holds it for minutes: embed.
  assert.equal(
    embedAheadDue(at(140_000, 100_000, 10_000), 100_000),
    true,
  );
  assert.equal(
    embedAheadDue(
      at(140_000, 100_000, pauseAfter(100_000) - EMBED_AHEAD_PAUSE_MS + 1),
      100_000,
    ),
    false,
  );
});
