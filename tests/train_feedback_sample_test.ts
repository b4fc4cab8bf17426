import assert from "node:assert/strict";
import {
  ledgerLine,
  parseJsonlTraces,
  pickLine,
  traceLine,
} from "../src/traces/mod.ts";
import { feedbackSample } from "../src/train/feedback_sample.ts";
import { FIT_ONLY, HELD, UNLABELLED } from "../src/train/split.ts";

const ISSUER = "0a1b2c3d";
const BUNDLE = "0011223344556677";
const T0 = Date.UTC(2026, 0, 1);

/** A feedback line answering a decision made at `at` (ms after T0). */
function line(
  text: string,
  answer: string,
  source: "uncertified" | "sample" | "audit" | "trace",
  at: number,
  options: { rate?: number; id?: string } = {},
): string {
  const id = options.id ?? `${source}-${text}`;
  return traceLine({
    text,
    answers: [["topic", answer]],
    time: new Date(T0 + at + 50),
    feedback: {
      source,
      samplingProbability: source === "uncertified"
        ? 1
        : source === "trace"
        ? null
        : options.rate ?? 0.1,
      ...(source === "audit" ? { audit: id } : { id }),
      ...(source === "trace" ? {} : { decidedAt: T0 + at, issuer: ISSUER }),
      bundle: BUNDLE,
    },
  });
}

function ledger(
  from: number,
  to: number,
  counts: {
    decisions: number;
    certified: number;
    picked: number;
    pickedCertified: number;
  },
  certifiable = true,
  rate = 0.1,
): string {
  return ledgerLine({
    issuer: ISSUER,
    question: "topic",
    bundle: BUNDLE,
    from: T0 + from,
    to: T0 + to,
    rate,
    certifiable,
    ...counts,
  });
}

function sample(text: string, settledBefore = Infinity, after?: number) {
  const set = parseJsonlTraces("log.jsonl", text);
  const s = feedbackSample(
    set,
    set.questions,
    settledBefore,
    after === undefined ? {} : { topic: T0 + after },
  );
  return { set, s, figures: s.figures.get("topic") };
}

Deno.test("feedbackSample() splits a complete census like traces, and holds the picks of a stretch that certified", async (t) => {
  await t.step(
    "a census: nothing could be certified, every decision answered",
    () => {
      const { s, figures } = sample(
        ledger(0, 1000, {
          decisions: 3,
          certified: 0,
          picked: 1,
          pickedCertified: 0,
        }, false) +
          line("a", "x", "uncertified", 10) +
          line("b", "y", "uncertified", 20) +
          line("c", "x", "sample", 30),
      );
      assert.deepEqual([...s.outside], [0, 0, 0]);
      assert.equal(figures?.census, 3);
    },
  );
  await t.step("a census with a decision unanswered is no census", () => {
    const { s, figures } = sample(
      ledger(0, 1000, {
        decisions: 4,
        certified: 0,
        picked: 1,
        pickedCertified: 0,
      }, false) +
        line("a", "x", "uncertified", 10) +
        line("b", "y", "uncertified", 20) +
        line("c", "x", "sample", 30),
    );
    assert.deepEqual([...s.outside], [FIT_ONLY, FIT_ONLY, HELD]);
    assert.equal(figures?.census, 0);
    assert.equal(figures?.held, 1);
    assert.equal(figures?.missing, 0);
  });
  await t.step(
    "a stretch that certified: picks held, the rest trains, unanswered picks counted",
    () => {
      const { s, figures } = sample(
        ledger(0, 1000, {
          decisions: 20,
          certified: 15,
          picked: 4,
          pickedCertified: 3,
        }) +
          line("a", "x", "uncertified", 10) +
          line("b", "y", "audit", 20) +
          line("c", "x", "sample", 30) +
          pickLine({
            question: "topic",
            text: "never answered",
            id: "lost-1",
            decidedAt: T0 + 40,
            issuer: ISSUER,
            bundle: BUNDLE,
            rate: 0.1,
          }),
      );
      // Two picks answered, one kept by its text, one lost altogether.
      assert.deepEqual([...s.outside], [FIT_ONLY, HELD, HELD, UNLABELLED]);
      assert.deepEqual(
        { held: figures?.held, unanswered: figures?.unanswered },
        { held: 2, unanswered: 1 },
      );
      assert.equal(figures?.missing, 1);
      assert.deepEqual(s.unanswered.get("topic"), [3]);
    },
  );
});

Deno.test("feedbackSample() trains on what no settled stretch accounts for", async (t) => {
  const log = ledger(0, 1000, {
    decisions: 5,
    certified: 3,
    picked: 1,
    pickedCertified: 1,
  }) +
    line("a", "x", "audit", 10) +
    line("b", "x", "sample", 1500) + // after every stretch
    line("c", "x", "sample", 20, { rate: 0.5 }) + // not the stretch's rate
    line("d", "x", "trace", 30); // a client's own line
  await t.step(
    "lines outside the ledger, at another rate, or sent by a client",
    () => {
      const { s, figures } = sample(log);
      assert.deepEqual([...s.outside], [HELD, FIT_ONLY, FIT_ONLY, FIT_ONLY]);
      assert.equal(figures?.held, 1);
      assert.equal(figures?.fitOnly, 3);
    },
  );
  await t.step("a stretch not yet settled", () => {
    const { s } = sample(log, T0 + 500);
    assert.deepEqual([...s.outside], [FIT_ONLY, FIT_ONLY, FIT_ONLY, FIT_ONLY]);
  });
  await t.step("a stretch from before the traffic changed, and traces", () => {
    const { s } = sample(
      log + JSON.stringify({ text: "seed", answers: { topic: "x" } }) + "\n",
      Infinity,
      500,
    );
    assert.deepEqual([...s.outside], [
      FIT_ONLY,
      FIT_ONLY,
      FIT_ONLY,
      FIT_ONLY,
      FIT_ONLY,
    ]);
  });
});

Deno.test("a feedback log's ledger and picks read back, kept once across files", () => {
  const log = ledger(0, 1000, {
    decisions: 2,
    certified: 0,
    picked: 1,
    pickedCertified: 0,
  }, false) +
    pickLine({
      question: "topic",
      text: "t",
      id: "p1",
      decidedAt: T0 + 5,
      issuer: ISSUER,
      bundle: BUNDLE,
      rate: 0.1,
    }) + line("t", "x", "sample", 5, { id: "p1" });
  const set = parseJsonlTraces("log.jsonl", log + log);
  assert.equal(set.ledger?.length, 1);
  assert.equal(set.picks?.length, 1);
  // The same decision's line is read once.
  assert.equal(set.questions[0]!.labels.filter((l) => l >= 0).length, 1);
  assert.throws(
    () =>
      parseJsonlTraces(
        "bad.jsonl",
        JSON.stringify({ ledger: { issuer: "x" } }) + "\n",
      ),
    /bad\.jsonl:1: "ledger"\."question" must be a non-empty string/,
  );
});
