/**
 * A learning service's advice: labels still needed, narrowed as retrains
 * read the learning curve again, with a time at the pace labels come.
 */

import assert from "node:assert/strict";
import {
  LabelNeeds,
  LabelPace,
  labelsNeeded,
  needInWords,
} from "../src/learn/advice.ts";

Deno.test("LabelNeeds narrows a range read again to its overlap with the one before, moved by the labels since", () => {
  const needs = new LabelNeeds();
  needs.update("intent", { lo: 1900, hi: 13000 }, 1000);
  needs.update("intent", { lo: 1500, hi: 2300 }, 1300);
  // 1,600-12,700 before, met by 1,500-2,300: 1,600-2,300.
  assert.deepEqual(needs.view(1300, 0).intent!.more_labels, {
    low: 1600,
    high: 2300,
  });
  // 300 labels later, without a retrain: 1,300-2,000.
  assert.deepEqual(needs.view(1600, 5).intent!.more_labels, {
    low: 1300,
    high: 2000,
  });
  assert.deepEqual(needs.view(1600, 5).intent!.minutes, { low: 5, high: 7 });
  // A range that does not overlap replaces it, and says the estimate moved.
  needs.update("intent", { lo: 150, hi: 400 }, 1600);
  const moved = needs.view(1600, 0).intent!;
  assert.deepEqual(moved.more_labels, { low: 150, high: 400 });
  assert.equal(moved.moved, true);
  // Its labels all came and nothing calibrated: the next range replaces it.
  needs.update("intent", { lo: 0, hi: 900 }, 2100);
  assert.deepEqual(needs.view(2100, 0).intent!.more_labels, {
    low: 0,
    high: 900,
  });
  // Calibrated: no advice.
  needs.update("intent", null, 2500);
  assert.deepEqual(needs.view(2500, 1), {});
});

Deno.test("labelsNeeded() reads train's advice, and needInWords() says it in labels with a time", () => {
  assert.deepEqual(
    labelsNeeded("... about 3,700 more (2,400-7,300), of ..."),
    { lo: 2400, hi: 7300 },
  );
  const words = needInWords({
    more_labels: { low: 2400, high: null },
    minutes: { low: 8, high: null },
    labels_per_s: 5,
    moved: false,
  });
  assert.equal(
    words,
    "over 2,400 more labels (learning curve), over 8 minutes at 5 labels a second",
  );
  assert.doesNotMatch(words, /traces|--/);
});

Deno.test("LabelPace counts the labels of the last minute", () => {
  const pace = new LabelPace(60_000);
  for (let i = 0; i < 100; i++) pace.count(i * 200); // 5 a second for 20 s
  assert.ok(Math.abs(pace.perSecond(20_000) - 5) < 0.1);
  // A minute and more later, nothing counts.
  assert.equal(pace.perSecond(200_000), 0);
});
