/**
 * The engine's serving of both tiers (`two_tier.ts`): when the second tier
 * is asked, and what the answer becomes, on the small table with a
 * constructed second tier (`_two_tier.ts`), in process.
 */

import assert from "node:assert/strict";
import {
  Answerer,
  answerWithSecondTier,
  asksSecondTier,
  assess,
  prepareText,
  QUIET_GUARD,
  setThresholdInForce,
  TableState,
  thresholdInForce,
} from "../src/engine/mod.ts";
import { EMBEDDING_SIZE } from "../src/encoder/mod.ts";
import { choiceAnswer } from "./_fixtures.ts";
import { favouriteOf, tierTexts, twoTierResult } from "./_two_tier.ts";

const { table } = twoTierResult();
const state = new TableState(table);
const L = table.byName.get("topic")!.semantic!.calibration.threshold;
setThresholdInForce(table, state, "topic", L);
const { certified, low } = tierTexts();
const embedding = new Float32Array(EMBEDDING_SIZE).fill(0.01);

function topic(text: string, options?: string[], exposed = false) {
  return assess(
    table,
    state,
    prepareText(table, state, text),
    "topic",
    { options, exposed },
    QUIET_GUARD,
  );
}

Deno.test("asksSecondTier() holds only for low confidence alone, on a question with a second tier, not exposed", () => {
  assert.equal(asksSecondTier(table, topic(certified), false), false);
  assert.equal(asksSecondTier(table, topic(low), false), true);
  assert.equal(asksSecondTier(table, topic(low, undefined, true), true), false);
  assert.equal(asksSecondTier(table, topic(""), false), false);
  const urgent = assess(
    table,
    state,
    prepareText(table, state, low),
    "urgent",
    {},
    QUIET_GUARD,
  );
  assert.equal(asksSecondTier(table, urgent, false), false);
  const options = table.byName.get("topic")!.options;
  const added = topic(low, [...options, "never learned"]);
  assert.equal(added.answer.flag, "options_changed");
  assert.equal(asksSecondTier(table, added, false), false);
});

Deno.test("answerWithSecondTier() certifies the second tier's answer by the one threshold, and never an option removed", () => {
  const favourite = favouriteOf(table);
  const r = answerWithSecondTier(table, topic(low), embedding, L);
  assert.equal(r.tier, "semantic");
  assert.equal(r.assessment.answer.kind, "choice");
  assert.equal(r.assessment.answer.choice, favourite);
  assert.equal(r.assessment.answer.certified, true);
  assert.equal(r.assessment.answer.flag, null);
  // No threshold: never certified.
  const none = answerWithSecondTier(table, topic(low), embedding, null);
  assert.equal(none.assessment.answer.certified, false);
  assert.equal(none.assessment.answer.flag, "low_confidence");
  // A threshold above the second tier's confidence.
  const strict = answerWithSecondTier(table, topic(low), embedding, 1);
  assert.equal(strict.assessment.answer.certified, false);
  // Narrowed without the second tier's best: answered among the offered, never certified.
  const offered = table.byName.get("topic")!.options.filter((o) =>
    o !== favourite
  );
  const narrowed = topic(low, offered);
  if (asksSecondTier(table, narrowed, false)) {
    const n = answerWithSecondTier(table, narrowed, embedding, L);
    assert.equal(n.assessment.answer.certified, false);
    assert.equal(n.assessment.answer.flag, "option_removed");
    assert.ok(offered.includes(n.assessment.answer.choice as string));
    const p = choiceAnswer(n.assessment.answer).probabilities;
    assert.ok(Math.abs(p.reduce((a, b) => a + b, 0) - 1) < 1e-9);
  }
});

Deno.test("answerWithSecondTier() leaves the table's answer when the novelty guard withholds the text", () => {
  const { table: t } = twoTierResult();
  const q = t.byName.get("topic")!;
  const tier = q.semantic!;
  // A reference whose calibration distances are all 0: any other text is novel.
  tier.novelty = {
    projection: new Float32Array(EMBEDDING_SIZE).fill(1),
    rank: 1,
    means: new Float32Array(q.options.length),
    scores: new Float32Array(50),
    p: 0.05,
  };
  const a = topic(low);
  const r = answerWithSecondTier(t, a, embedding, L);
  assert.equal(r.tier, "table");
  assert.equal(r.semantic.novel, true);
  assert.equal(r.assessment, a);
});

Deno.test("Answerer: with its second tier served, L is in force for the table and the second tier is asked; without, neither", () => {
  const { table: t } = twoTierResult();
  const q = t.byName.get("topic")!;
  const tiered = new Answerer(t, { secondTier: true });
  assert.equal(tiered.tiered, true);
  assert.equal(
    thresholdInForce(t, tiered.state, "topic"),
    q.semantic!.calibration.threshold,
  );
  const a = tiered.answer(tiered.prepare(low), "topic");
  assert.equal(tiered.asksSecondTier(a, false), true);
  const r = tiered.answerWithSecondTier(a, embedding, undefined);
  assert.equal(r.tier, "semantic");
  const alone = new Answerer(t);
  assert.equal(alone.tiered, false);
  assert.equal(
    alone.asksSecondTier(alone.answer(alone.prepare(low), "topic"), false),
    false,
  );
  assert.deepEqual(alone.semanticThresholds, t.questions.map(() => null));
});
