/**
 * The dashboard's figures in words and its chart ticks: pure functions of
 * `static/dashboard/`, tested here without a browser.
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  calibrationInWords,
  elapsedTicks,
  fmtAgo,
  fmtAnswer,
  fmtDurationShort,
  fmtEvidence,
  fmtLatency,
  fmtLatencyTick,
  fmtPct,
  fmtRadius,
  fmtSecondsAgo,
  plural,
  reloadInWords,
} from "../static/dashboard/format.ts";
import {
  decadeRange,
  decadeTicks,
  secondsTicks,
} from "../static/dashboard/scales.ts";

Deno.test("fmtLatency() picks the unit that reads best, and a dash when there is no figure", () => {
  assert.equal(fmtLatency(8.46), "8.5 µs");
  assert.equal(fmtLatency(412.4), "412 µs");
  assert.equal(fmtLatency(1250), "1.25 ms");
  assert.equal(fmtLatency(32_800), "32.8 ms");
  assert.equal(fmtLatency(2_500_000), "2.50 s");
  assert.equal(fmtLatency(null), "—");
  assert.equal(fmtLatency(NaN), "—");
});

Deno.test("fmtLatencyTick() drops trailing zeros for axis labels", () => {
  assert.equal(fmtLatencyTick(1000), "1 ms");
  assert.equal(fmtLatencyTick(2500), "2.5 ms");
  assert.equal(fmtLatencyTick(20), "20 µs");
});

Deno.test("fmtPct() keeps tiny and near-whole shares honest", () => {
  assert.equal(fmtPct(0.873), "87.3%");
  assert.equal(fmtPct(0.0004), "<0.1%");
  assert.equal(fmtPct(0.9996), ">99.9%");
  assert.equal(fmtPct(1), "100.0%");
  assert.equal(fmtPct(null), "—");
});

Deno.test("fmtEvidence() writes astronomically large evidence as a power of ten", () => {
  assert.equal(fmtEvidence(3.581), "3.58");
  assert.equal(fmtEvidence(1.3e35), "1.3 × 10³⁵");
  assert.equal(fmtEvidence(Infinity), "∞");
  assert.equal(fmtEvidence(undefined), "—");
});

Deno.test("fmtDurationShort(), fmtAgo() and fmtSecondsAgo() say durations in one unit", () => {
  assert.equal(fmtDurationShort(0), "0 s");
  assert.equal(fmtDurationShort(81), "81 s");
  assert.equal(fmtDurationShort(1290), "21.5 min");
  const now = Date.parse("2026-01-01T12:00:00Z");
  assert.equal(fmtAgo("2026-01-01T11:59:58Z", now), "just now");
  assert.equal(fmtAgo("2026-01-01T11:59:20Z", now), "40 s ago");
  assert.equal(fmtAgo("2026-01-01T11:57:00Z", now), "3 min ago");
  assert.equal(fmtAgo("not a time", now), "");
  assert.equal(fmtSecondsAgo(-0), "now");
  assert.equal(fmtSecondsAgo(-40), "−40 s");
  assert.equal(fmtSecondsAgo(-300), "−5 min");
});

Deno.test("fmtAnswer(), fmtRadius() and plural() say answers and counts in words", () => {
  assert.equal(fmtAnswer(true), "yes");
  assert.equal(fmtAnswer(false), "no");
  assert.equal(fmtAnswer(null), "—");
  assert.equal(fmtAnswer("refund"), "refund");
  assert.equal(fmtRadius(null), "∞");
  assert.equal(fmtRadius(2), "2");
  assert.equal(plural(1, "request"), "1 request");
  assert.equal(plural(0, "request"), "0 requests");
});

Deno.test("decadeRange() spans whole decades, at least one", () => {
  assert.deepEqual(decadeRange(13, 57), [10, 100]);
  assert.deepEqual(decadeRange(52, 3440), [10, 10_000]);
  assert.deepEqual(decadeRange(10, 10), [10, 100]);
});

Deno.test("decadeTicks() marks 1, 2 and 5 per decade over two decades or fewer, decades only beyond", () => {
  assert.deepEqual(decadeTicks(10, 100), [10, 20, 50, 100]);
  assert.deepEqual(decadeTicks(10, 1000), [10, 20, 50, 100, 200, 500, 1000]);
  assert.deepEqual(decadeTicks(10, 100_000), [10, 100, 1000, 10_000, 100_000]);
});

Deno.test("secondsTicks() steps back from now by a round step that fits the count", () => {
  assert.deepEqual(secondsTicks(-16.3, 0, 4), [-15, -10, -5, 0]);
  assert.deepEqual(secondsTicks(-8.5, 0, 10), [
    -8,
    -7,
    -6,
    -5,
    -4,
    -3,
    -2,
    -1,
    0,
  ]);
  assert.deepEqual(secondsTicks(-360, 0, 5), [-360, -240, -120, 0]);
});

Deno.test("reloadInWords() names the bundle and, after a reload, when it began serving", () => {
  const bundle = { id: "1a2b3c4d5e6f7a8b" };
  // The first 12 hex digits, as versions, eval and serve show a bundle id.
  assert.equal(reloadInWords(bundle, 0), " · bundle 1a2b3c4d5e6f");
  assert.match(
    reloadInWords({ ...bundle, loaded_at: "2026-01-01T12:03:04Z" }, 2),
    /^ · bundle 1a2b3c4d5e6f, reloaded at .+ \(2 reloads\)$/,
  );
  assert.equal(reloadInWords(undefined, 0), "");
});

Deno.test("calibrationInWords() names the threshold in force as both tiers' beside the table's own, for a question served with its second tier", () => {
  const q = {
    name: "intent",
    kind: "choice",
    options: ["a", "b"],
    threshold: 0.9522,
    alpha: 0.05,
  };
  assert.equal(calibrationInWords(q), "threshold 95.2% · α 5.0%");
  assert.equal(
    calibrationInWords({ ...q, table_threshold: 0.9722 }),
    "threshold in force 95.2% (both tiers) · table's own 97.2% · α 5.0%",
  );
  assert.equal(
    calibrationInWords({ ...q, threshold: null }),
    "uncalibrated: never certified",
  );
});

Deno.test("the Learning chart's time ticks never repeat", () => {
  assert.deepEqual(elapsedTicks([0, 5, 10]), ["0 min", "5 min", "10 min"]);
  // Ticks half a minute apart once read "1 min, 1 min, 2 min, 2 min".
  assert.deepEqual(elapsedTicks([1, 1.5, 2, 2.5]), [
    "1:00",
    "1:30",
    "2:00",
    "2:30",
  ]);
  for (const step of [0.005, 0.01, 0.2, 0.25, 0.5, 2]) {
    const splits = Array.from({ length: 8 }, (_, i) => 0.3 + i * step);
    const ticks = elapsedTicks(splits);
    assert.equal(new Set(ticks).size, ticks.length, `${step}: ${ticks}`);
  }
});
