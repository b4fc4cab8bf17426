/**
 * A newcomer's first trace file: 3,000 lines with one yes/no question that
 * the table can answer right about 95% of the time (the other 5% are
 * ambiguous texts whose answer is a coin flip). Before the certification
 * with fallback, such a file was uncalibrated in 2 of 6 seeds: the scan
 * failed its first candidate and stopped. It must now calibrate in every
 * seed, and still keep its bound on fresh texts.
 *
 * @module
 */

import assert from "node:assert/strict";
import { parseJsonlTraces } from "../src/traces/mod.ts";
import { train } from "../src/train/trainer.ts";
import { evaluate } from "../src/eval/evaluate.ts";
import { FILLER_WORDS, pick, rng, smallTrainOptions } from "./_fixtures.ts";

const YES = ["refund", "money back", "reimburse", "return my payment"];
const NO = ["hello", "thanks", "opening hours", "address"];

/** `count` traces of a yes/no question `refund`, 5% of them ambiguous with a random answer. */
function refundTraces(count: number, seed: number): string {
  const random = rng(seed);
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const words = Array.from(
      { length: 5 + Math.floor(random() * 6) },
      () => pick(random, FILLER_WORDS),
    );
    const ambiguous = random() < 0.05;
    const yes = random() < 0.5;
    words.splice(
      Math.floor(random() * words.length),
      0,
      pick(random, yes ? YES : NO),
    );
    if (ambiguous) words.push(pick(random, yes ? NO : YES));
    const answer = ambiguous ? random() < 0.5 : yes;
    lines.push(
      JSON.stringify({ text: words.join(" "), answers: { refund: answer } }),
    );
  }
  return lines.join("\n");
}

Deno.test("a 3,000-line yes/no file answered right 95% of the time calibrates in every seed and keeps its bound", () => {
  const fresh = parseJsonlTraces("fresh.jsonl", refundTraces(4000, 1000));
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    const traces = parseJsonlTraces("t.jsonl", refundTraces(3000, seed));
    const r = train(traces, smallTrainOptions({ seed }));
    const q = r.report.questions[0]!;
    assert.equal(
      q.calibration.status,
      "calibrated",
      `seed ${seed}: ${q.calibration.reason}`,
    );
    const f = evaluate(r.table, fresh, false).questions.refund!;
    console.log(
      `seed ${seed}: fresh texts certified ${
        (f.coverage! * 100).toFixed(1)
      }% at ${(f.disagreement! * 100).toFixed(1)}% disagreement`,
    );
    assert.ok(f.coverage! > 0.5, `seed ${seed}: certified ${f.coverage}`);
    assert.ok(
      f.disagreement! <= 0.05,
      `seed ${seed}: disagreement ${f.disagreement}`,
    );
  }
});
