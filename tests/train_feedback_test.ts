/**
 * Lines of a service's feedback log (traces with a `feedback` object) are
 * no sample of the traffic: training keeps them in the fit part, so that
 * they never calibrate or test, and says so in its report.
 */

import assert from "node:assert/strict";
import { parseJsonlTraces, traceLine } from "../src/traces/mod.ts";
import { train } from "../src/train/trainer.ts";
import { splitInWords } from "../src/train/split_words.ts";
import { smallTrainOptions, syntheticTraces, TOPICS } from "./_fixtures.ts";

const DAY = 86_400_000;

/**
 * 1,500 ordinary traces over 30 days, then 400 feedback lines (the newest,
 * as a log appended by a running service is) whose answers are all another
 * topic than the text's: the kind of sample an audit of hard cases gives.
 * With `marked` false the same lines carry no `feedback` object.
 */
function traces(marked: boolean): string {
  const ordinary = syntheticTraces({ count: 1500, seed: 3, noise: 0.01 });
  const start = Date.UTC(2026, 0, 1);
  let text = "";
  ordinary.forEach((t, i) => {
    text += traceLine({
      text: t.text,
      answers: Object.entries(t.answers),
      time: new Date(start + i * (30 * DAY / ordinary.length)),
    });
  });
  const later = syntheticTraces({ count: 400, seed: 4, noise: 0 });
  later.forEach((t, i) => {
    const topic = t.answers.topic as string;
    const wrong = TOPICS[(TOPICS.indexOf(topic) + 1) % TOPICS.length]!;
    text += traceLine({
      text: t.text,
      answers: [["topic", wrong]],
      time: new Date(start + 31 * DAY + i * 1000),
      ...(marked
        ? {
          feedback: {
            source: i % 2 === 0 ? "audit" : "uncertified",
            samplingProbability: i % 2 === 0 ? 0.02 : null,
            bundle: "ab".repeat(32),
          },
        }
        : {}),
    });
  });
  return text;
}

Deno.test("reading traces marks the lines of a feedback log", () => {
  const set = parseJsonlTraces("log.jsonl", traces(true));
  assert.ok(set.feedback);
  assert.equal(set.feedback.length, 1900);
  assert.equal(set.feedback.slice(0, 1500).every((f) => f === 0), true);
  assert.equal(set.feedback.slice(1500).every((f) => f === 1), true);
  const plain = parseJsonlTraces("log.jsonl", traces(false));
  assert.equal(plain.feedback ?? null, null);
});

Deno.test("a bad feedback object is an error naming the line", () => {
  assert.throws(
    () =>
      parseJsonlTraces(
        "log.jsonl",
        '{"text":"a","answers":{"q":"x"},"feedback":"audit"}\n',
      ),
    /log\.jsonl:1: "feedback" must be an object with a "source"/,
  );
});

Deno.test("train() keeps feedback lines out of calibration and test, and reports it", () => {
  const options = smallTrainOptions({ split: "time" });
  const marked = train(parseJsonlTraces("log.jsonl", traces(true)), options);
  const split = marked.report.split;
  assert.equal(split.feedback_in_fit, 400);
  const topic = marked.report.questions.find((q) => q.name === "topic")!;
  // Calibrated and tested on ordinary traces only: the table agrees with them.
  assert.ok(topic.test.accuracy! > 0.85, JSON.stringify(topic.test));
  assert.match(splitInWords(split), /400 traces are lines of a feedback log/);
  assert.match(splitInWords(split), /none calibrates or tests/);
  // The same lines unmarked are the newest traces: they become the test
  // and calibration parts, and the figures say the table is wrong.
  const unmarked = train(parseJsonlTraces("log.jsonl", traces(false)), options);
  assert.equal(unmarked.report.split.feedback_in_fit, 0);
  const biased = unmarked.report.questions.find((q) => q.name === "topic")!;
  assert.ok(biased.test.accuracy! < 0.5, JSON.stringify(biased.test));
});
