/**
 * The serving state of a table and what later work plugs into: the
 * threshold in force, withdrawn certification, which drift rule withheld
 * an answer, unlearned options kept in the probabilities, and suggestions
 * for a question name the table does not know.
 */

import assert from "node:assert/strict";
import {
  assess,
  type DriftGuard,
  prepareText,
  probabilitiesOf,
  QUIET_GUARD,
  reasonInWords,
  reinstateCertification,
  setThresholdInForce,
  suggestQuestion,
  type Table,
  type TableSettings,
  TableState,
  thresholdInForce,
  withdrawCertification,
} from "../src/engine/mod.ts";
import { choiceAnswer, smallTable, stateOf } from "./_fixtures.ts";

const trained = smallTable().table;
/** A table of its own (fresh state), with the single-text rule off unless a test turns it on. */
function fresh(patch: Partial<TableSettings["drift"]> = {}): Table {
  return {
    ...trained,
    settings: {
      ...trained.settings,
      drift: {
        ...trained.settings.drift,
        single_p: 0,
        max_novelty: 1,
        ...patch,
      },
    },
  };
}
const CLEAR = "i need my parcel";
const ask = (
  t: Table,
  text: string,
  question = "topic",
  options?: string[],
  guard: DriftGuard = QUIET_GUARD,
) =>
  assess(
    t,
    stateOf(t),
    prepareText(t, stateOf(t), text),
    question,
    { options },
    guard,
  );

Deno.test("thresholdInForce() starts at the calibrated threshold, and setThresholdInForce() moves what is certified", () => {
  const table = fresh();
  const calibrated = table.byName.get("topic")!.calibration.threshold!;
  assert.equal(thresholdInForce(table, stateOf(table), "topic"), calibrated);
  const before = ask(table, CLEAR);
  assert.equal(before.answer.certified, true);
  assert.equal(before.threshold, calibrated);

  // Above the answer's confidence: the same text is no longer certified.
  setThresholdInForce(
    table,
    stateOf(table),
    "topic",
    Math.min(1, before.fullConfidence + 1e-9),
  );
  const raised = ask(table, CLEAR);
  assert.equal(raised.answer.flag, "low_confidence");
  assert.equal(
    raised.threshold,
    thresholdInForce(table, stateOf(table), "topic"),
  );

  // Down to 0: a mixed text below the calibrated threshold is certified.
  const mixed = "invoice parcel refund password";
  assert.equal(ask(table, mixed).answer.flag, "low_confidence");
  setThresholdInForce(table, stateOf(table), "topic", 0);
  assert.equal(ask(table, mixed).answer.certified, true);

  // Null: the question is served as uncalibrated.
  setThresholdInForce(table, stateOf(table), "topic", null);
  assert.equal(ask(table, CLEAR).answer.flag, "uncalibrated");

  // Another state of the same table is not touched: the table is constant.
  assert.equal(
    thresholdInForce(table, new TableState(table), "topic"),
    calibrated,
  );
  assert.throws(
    () => setThresholdInForce(table, stateOf(table), "topic", 1.5),
    RangeError,
  );
  assert.throws(
    () => setThresholdInForce(table, stateOf(table), "nope", 0.5),
    /no question named "nope"; its questions are: topic, urgent, coin/,
  );
});

Deno.test("withdrawCertification() withholds every answer of a question with drift rule live_audit until reinstated", () => {
  const table = fresh();
  withdrawCertification(table, stateOf(table), "topic");
  const held = ask(table, CLEAR);
  assert.equal(held.answer.flag, "drift");
  assert.equal(held.answer.driftRule, "live_audit");
  assert.match(reasonInWords(held), /withdrawn while a live audit/);
  assert.equal(ask(table, CLEAR, "urgent").answer.driftRule, null);
  reinstateCertification(table, stateOf(table), "topic");
  assert.equal(ask(table, CLEAR).answer.certified, true);
});

Deno.test("assess() names the drift rule that withheld an answer: alarm or novelty", () => {
  const loud: DriftGuard = { observe: () => false };
  const alarmed = ask(fresh(), CLEAR, "topic", undefined, loud);
  assert.equal(alarmed.answer.flag, "drift");
  assert.equal(alarmed.answer.driftRule, "alarm");
  assert.match(reasonInWords(alarmed), /alarm stands/);

  const strict = fresh({ max_novelty: 0.5 });
  const foreign = ask(strict, "zqxj vbnmw ploktr qwyzz xxv", "urgent");
  assert.equal(foreign.answer.flag, "drift");
  assert.equal(foreign.answer.driftRule, "novelty");
  assert.match(reasonInWords(foreign), /were never seen in training/);

  // Any other flag carries no drift rule.
  assert.equal(
    ask(fresh(), "invoice parcel refund password").answer.driftRule,
    null,
  );
});

Deno.test("assess() keeps an offered option the table never learned in the probabilities, at 0", () => {
  const table = fresh();
  const a = ask(table, CLEAR, "topic", ["shipping", "teleport", "billing"]);
  assert.equal(a.answer.flag, "options_changed");
  const p = probabilitiesOf(a.answer);
  // Learned options in table order, then the unlearned ones as given.
  assert.deepEqual(Object.keys(p), ["billing", "shipping", "teleport"]);
  assert.equal(p.teleport, 0);
  assert.ok(Math.abs(p.billing! + p.shipping! - 1) < 1e-9);
  const topic = table.byName.get("topic")!;
  assert.deepEqual(choiceAnswer(a.answer).optionIndices, [
    topic.optionIndex.get("billing"),
    topic.optionIndex.get("shipping"),
    -1,
  ]);
  assert.equal(a.answer.choice, "shipping");
  // Only unlearned options: nothing to rank them by, an even split.
  const none = ask(table, CLEAR, "topic", ["warp", "teleport", "warp"]);
  assert.deepEqual(probabilitiesOf(none.answer), { warp: 0.5, teleport: 0.5 });
});

Deno.test("suggestQuestion() names the question a wrongly cased or slightly misspelt name meant", () => {
  const table = fresh();
  assert.equal(suggestQuestion(table, "Topic"), "topic");
  assert.equal(suggestQuestion(table, "URGENT"), "urgent");
  assert.equal(suggestQuestion(table, "to-pic"), "topic");
  assert.equal(suggestQuestion(table, "urgnet"), "urgent");
  assert.equal(suggestQuestion(table, "topic"), null, "a known name");
  assert.equal(suggestQuestion(table, "weather"), null, "nothing close");
  const a = ask(table, CLEAR, "Topic");
  assert.equal(a.answer.flag, "unsupported");
  assert.equal(a.suggestion, "topic");
  assert.equal(
    reasonInWords(a, { questions: ["topic", "urgent", "coin"] }),
    'Not certified: the table has no question named "Topic"; did you mean "topic"? Its questions are: topic, urgent, coin.',
  );
});

Deno.test("TableState keeps the word cache per state: another state of the same table starts empty", () => {
  const table = fresh();
  const a = new TableState(table);
  const b = new TableState(table);
  assess(table, a, prepareText(table, a, CLEAR), "topic", {}, QUIET_GUARD);
  assert.ok(a.words.size > 0);
  assert.equal(b.words.size, 0);
});

Deno.test("prepareText() finds the words textWords() reads and their buckets, whether the word cache keeps them or not", async () => {
  const { textWords, wordBucketsOf } = await import(
    "../src/engine/features.ts"
  );
  const featuresOf = (text: string, s: typeof trained.featurizer) => {
    const { words, bigramBuckets } = textWords(text, s);
    const wordBuckets = words.map((w) => wordBucketsOf(w, s));
    return { words, wordBuckets, bigramBuckets, empty: words.length === 0 };
  };
  const texts = [
    CLEAR,
    "",
    "REFUND please refund please",
    "Ünïcödé wörds, 中文 and emoji 🙂 mixed",
    Array.from({ length: 60 }, (_, i) => `w${i % 25} parcel`).join(" "),
    "a".repeat(50) + " " + "b".repeat(30),
  ];
  for (const budget of [16 * 1024 * 1024, 0]) {
    const t = trained;
    const state = new TableState(t, { wordCacheBytes: budget });
    for (const round of [1, 2]) {
      for (const text of texts) {
        const want = featuresOf(text, t.featurizer);
        const got = prepareText(t, state, text);
        assert.deepEqual(got.features, want, `${budget} ${round} ${text}`);
        assert.equal(got.empty, want.empty);
        assert.deepEqual(got.bigramBuckets, want.bigramBuckets);
      }
    }
    assert.equal(state.words.size > 0, budget > 0);
    assert.ok(state.words.bytes <= budget);
  }
});

Deno.test("TableState serves the table it was made for and its copies, and refuses a table of other rows", () => {
  const table = fresh();
  const state = new TableState(table);
  // A copy with other settings: the same featurizer and rows, accepted.
  const copy: Table = {
    ...table,
    settings: { ...table.settings, min_radius: 9 },
  };
  assert.equal(prepareText(copy, state, CLEAR).empty, false);
  // Another table's rows: its word buckets would be wrong here.
  const other: Table = { ...table, rowOf: new Int32Array(table.rowOf) };
  assert.throws(
    () => prepareText(other, state, CLEAR),
    (e: unknown) =>
      e instanceof RangeError &&
      /made for another table/.test(e.message) &&
      /new TableState\(table\)/.test(e.message),
  );
});
