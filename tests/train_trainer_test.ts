import assert from "node:assert/strict";
import { train } from "../src/train/trainer.ts";
import { type TrainResult } from "../src/train/contents.ts";
import { CALIBRATION, splitTraces, TEST } from "../src/train/split.ts";
import { parseJsonlTraces } from "../src/traces/mod.ts";
import { assess } from "../src/engine/answer.ts";
import { prepareText } from "../src/engine/prepare.ts";
import { QUIET_GUARD } from "../src/engine/drift.ts";
import {
  smallTrainOptions,
  stateOf,
  type SyntheticTrace,
  syntheticTraces,
  toJsonl,
  TOPICS,
} from "./_fixtures.ts";

const OPTIONS = smallTrainOptions({ seed: 4 });
const BASE = syntheticTraces({ count: 1500, seed: 12, noise: 0.005 });
const SPLIT = splitTraces({ texts: BASE.map((t) => t.text) }, {
  mode: OPTIONS.split,
  calibration: OPTIONS.calibrationShare,
  test: OPTIONS.testShare,
  validation: OPTIONS.validationShare,
  seed: OPTIONS.seed,
  similarity: OPTIONS.similarity,
}).parts;

function trainOn(traces: SyntheticTrace[]): TrainResult {
  return train(parseJsonlTraces("t.jsonl", toJsonl(traces)), OPTIONS);
}

/** Traces whose answers in split `s` are replaced by wrong ones. */
function corrupt(s: number): SyntheticTrace[] {
  return BASE.map((t, i) => {
    if (SPLIT[i] !== s) return t;
    const answers = { ...t.answers };
    answers.topic =
      TOPICS[(TOPICS.indexOf(answers.topic as string) + 1) % TOPICS.length]!;
    if (typeof answers.urgent === "boolean") answers.urgent = !answers.urgent;
    return { text: t.text, answers };
  });
}

/** One option's weights, by option name (option order follows first appearance). */
function column(r: TrainResult, question: string, option: string): number[] {
  const q = r.table.byName.get(question)!;
  const k = q.options.length;
  const j = q.options.indexOf(option);
  return [
    ...Array.from(
      { length: r.table.rowCount },
      (_, row) => q.weights[row * k + j]!,
    ),
    q.bias[j]!,
  ];
}

const clean = trainOn(BASE);

Deno.test("train() never lets test-split answers choose anything", () => {
  const dirty = trainOn(corrupt(TEST));
  for (const name of ["topic", "urgent"]) {
    const a = clean.table.byName.get(name)!;
    const b = dirty.table.byName.get(name)!;
    for (const o of a.options) {
      assert.deepEqual(
        column(dirty, name, o),
        column(clean, name, o),
        `${name}/${o}`,
      );
    }
    assert.equal(b.temperature, a.temperature);
    assert.deepEqual(b.calibration, a.calibration);
    // Only the report's test figures see the corrupted answers.
    const ra = clean.report.questions.find((q) => q.name === name)!;
    const rb = dirty.report.questions.find((q) => q.name === name)!;
    assert.ok(
      rb.test.accuracy! < ra.test.accuracy! - 0.5,
      `${name}: ${rb.test.accuracy} vs ${ra.test.accuracy}`,
    );
  }
});

Deno.test("train() chooses weights without calibration answers and the threshold with them", () => {
  const dirty = trainOn(corrupt(CALIBRATION));
  const a = clean.table.byName.get("topic")!;
  const b = dirty.table.byName.get("topic")!;
  for (const o of a.options) {
    assert.deepEqual(column(dirty, "topic", o), column(clean, "topic", o), o);
  }
  assert.equal(b.temperature, a.temperature);
  assert.equal(a.calibration.status, "calibrated");
  // Every calibration answer now disagrees: nothing can pass.
  assert.equal(b.calibration.status, "uncalibrated");
  assert.match(b.calibration.reason!, /no candidate threshold passed/);
});

Deno.test("train() reports test figures measured exactly as serving answers", () => {
  const r = clean.report.questions.find((q) => q.name === "topic")!;
  let n = 0, certified = 0, wrong = 0;
  BASE.forEach((t, i) => {
    if (SPLIT[i] !== TEST) return;
    const a = assess(
      clean.table,
      stateOf(clean.table),
      prepareText(clean.table, stateOf(clean.table), t.text),
      "topic",
      {},
      QUIET_GUARD,
    ).answer;
    n++;
    if (a.certified) {
      certified++;
      if (a.choice !== t.answers.topic) wrong++;
    }
  });
  assert.equal(r.answers.test, n);
  assert.equal(r.test.n, n);
  assert.equal(r.test.certified, certified);
  assert.equal(r.test.disagreements, wrong);
  console.log(
    `trainer, synthetic topic: test ${certified}/${n} certified (${
      (100 * certified / n).toFixed(1)
    }%), ` +
      `${wrong} disagreements; threshold ${
        clean.table.byName.get("topic")!.calibration.threshold?.toFixed(3)
      }`,
  );
});

Deno.test("train() marks a question without enough held-out answers uncalibrated, with the reason", () => {
  // `urgent` is answered by about 310 of 500 traces, just above the 295
  // training accepts; with this seed 53 of them land in calibration, fewer
  // than the 59 needed.
  const r = train(
    parseJsonlTraces(
      "t.jsonl",
      toJsonl(syntheticTraces({ count: 500, seed: 2, urgentShare: 0.62 })),
    ),
    smallTrainOptions(),
  );
  for (const q of r.table.questions) {
    const report = r.report.questions.find((x) => x.name === q.name)!;
    console.log(
      `trainer, 500 traces: ${q.name} has ${report.answers.calibration} calibration answers, ${q.calibration.status}`,
    );
    if (report.answers.calibration < 59) {
      assert.equal(q.calibration.status, "uncalibrated", q.name);
      assert.match(
        q.calibration.reason!,
        /^only \d+ calibration answers; at least 59 are needed/,
      );
    }
    if (q.calibration.status === "uncalibrated") {
      assert.ok(q.calibration.reason!.length > 0);
    }
  }
  assert.ok(
    r.report.questions.some((q) => q.answers.calibration < 59),
    "the seed gives a small calibration split",
  );
});

Deno.test("train() keeps certified disagreement on fresh data at most alpha in all but about delta of runs", () => {
  // End to end: each run trains on its own synthetic traces (the reference model errs on 3% of them
  // at random, so the true disagreement sits near alpha), then the certified answers are judged on
  // 10,000 fresh traces from the same source.
  const runs = 30;
  const { alpha, delta } = OPTIONS;
  const fresh = syntheticTraces({ count: 10_000, seed: 424242, noise: 0.03 });
  let calibrated = 0;
  let violations = 0;
  const risks: number[] = [];
  for (let run = 0; run < runs; run++) {
    const r = train(
      parseJsonlTraces(
        "t.jsonl",
        toJsonl(
          syntheticTraces({ count: 1500, seed: 1000 + run, noise: 0.03 }),
        ),
      ),
      smallTrainOptions({ seed: run + 1 }),
    );
    if (r.table.byName.get("topic")!.calibration.threshold === null) continue;
    calibrated++;
    let certified = 0;
    let wrong = 0;
    for (const t of fresh) {
      const a = assess(
        r.table,
        stateOf(r.table),
        prepareText(r.table, stateOf(r.table), t.text),
        "topic",
        {},
        QUIET_GUARD,
      )
        .answer;
      if (!a.certified) continue;
      certified++;
      if (a.choice !== t.answers.topic) wrong++;
    }
    risks.push(wrong / certified);
    if (wrong / certified > alpha) violations++;
  }
  const allowed = delta + 3 * Math.sqrt((delta * (1 - delta)) / runs);
  console.log(
    `trainer end to end: ${calibrated}/${runs} runs calibrated, disagreement on fresh data above alpha in ${violations} ` +
      `(allowed ${(allowed * 100).toFixed(0)}% of runs); largest ${
        Math.max(...risks).toFixed(3)
      }, ` +
      `median ${
        [...risks].sort((a, b) => a - b)[Math.floor(risks.length / 2)]?.toFixed(
          3,
        )
      }`,
  );
  assert.ok(calibrated >= runs / 2, `only ${calibrated} runs calibrated`);
  assert.ok(
    violations / runs <= allowed,
    `${violations} violations in ${runs} runs`,
  );
});
