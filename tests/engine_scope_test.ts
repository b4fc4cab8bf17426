import assert from "node:assert/strict";
import {
  calibrationInScope,
  energyOf,
  looksInScope,
  SCOPE_SCORES,
  scopeApplies,
  scopePValue,
  spreadOf,
} from "../src/engine/scope.ts";
import { assess } from "../src/engine/answer.ts";
import { QUIET_GUARD } from "../src/engine/drift.ts";
import { prepareText } from "../src/engine/prepare.ts";
import { reasonInWords } from "../src/engine/reason.ts";
import { rng, SCOPED, smallTable, stateOf } from "./_fixtures.ts";
import { argmax, softmax } from "../src/engine/score.ts";

Deno.test("spreadOf() is sum p ln p over the options, from the softmax's own terms", () => {
  const random = rng(3);
  for (let run = 0; run < 200; run++) {
    const k = 2 + Math.floor(random() * 80);
    const logits = Float64Array.from({ length: k }, () => 20 * random() - 10);
    const t = 0.2 + 3 * random();
    const p = softmax(logits, t);
    const want = Array.from(p).reduce(
      (s, x) => s + (x > 0 ? x * Math.log(x) : 0),
      0,
    );
    assert.ok(Math.abs(spreadOf(logits, t, p, argmax(p)) - want) < 1e-9);
  }
  // A sure answer has spread 0; an even one over K options, -ln K.
  const even = Float64Array.of(1, 1, 1, 1);
  assert.ok(
    Math.abs(spreadOf(even, 1, softmax(even, 1), 0) + Math.log(4)) < 1e-12,
  );
  const sure = Float64Array.of(500, 0, 0);
  assert.ok(Math.abs(spreadOf(sure, 1, softmax(sure, 1), 0)) < 1e-12);
});

Deno.test("scopeApplies() only to choices of three options or more", () => {
  assert.equal(scopeApplies(2), false);
  assert.equal(scopeApplies(3), true);
});

Deno.test("energyOf() is t log sum exp(logit / t), stable for large logits", () => {
  const logits = [1.5, -0.5, 3];
  for (const t of [0.5, 1, 2]) {
    const want = t *
      Math.log(logits.reduce((s, l) => s + Math.exp(l / t), 0));
    assert.ok(Math.abs(energyOf(logits, t) - want) < 1e-12);
  }
  assert.ok(Number.isFinite(energyOf([1000, 999], 1)));
  assert.ok(Math.abs(energyOf([1000, 1000], 1) - (1000 + Math.log(2))) < 1e-9);
  // More evidence for any option means more energy.
  assert.ok(energyOf([4, 0, 0], 1) > energyOf([1, 0, 0], 1));
});

Deno.test("scopePValue() ranks a text's score among the calibration texts'", () => {
  const sorted = Float32Array.from([1, 2, 3, 4]);
  assert.equal(scopePValue(sorted, 0), 1 / 5);
  assert.equal(scopePValue(sorted, 2), 3 / 5);
  assert.equal(scopePValue(sorted, 9), 1);
  assert.equal(looksInScope(0.2, sorted, 0), false);
  assert.equal(looksInScope(0.2, sorted, 1), true);
  assert.equal(looksInScope(0, sorted, -100), true, "0 turns the rule off");
  assert.equal(looksInScope(0.2, new Float32Array(0), -100), true);
});

Deno.test("the out-of-scope rule costs at most scope_p of texts like the calibration ones", () => {
  const random = rng(5);
  const p = 0.02;
  let rejected = 0;
  let total = 0;
  for (let run = 0; run < 200; run++) {
    const draw = () => Math.log(-Math.log(random() + 1e-12)) * 2;
    const calibration = Float32Array.from({ length: 300 }, draw).sort();
    for (let i = 0; i < 100; i++) {
      total++;
      if (!looksInScope(p, calibration, draw())) rejected++;
    }
  }
  console.log(
    `scope rule at p=${p}: rejected ${
      (100 * rejected / total).toFixed(2)
    }% of in-scope texts`,
  );
  assert.ok(rejected / total <= p + 3 * Math.sqrt(p * (1 - p) / total));
});

Deno.test("calibrationInScope() judges each calibration text against the others", () => {
  const energies = Float32Array.from([5, 1, 4, 3, 2, 6, 7, 8, 9, 10]);
  // Leave one out: the lowest has p = 1/10, the next 2/10.
  assert.deepEqual([...calibrationInScope(energies, 0.1)], [
    1,
    0,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
  ]);
  assert.deepEqual([...calibrationInScope(energies, 0.2)], [
    1,
    0,
    1,
    1,
    0,
    1,
    1,
    1,
    1,
    1,
  ]);
  assert.deepEqual([...calibrationInScope(energies, 0)], Array(10).fill(1));
});

for (const score of SCOPE_SCORES) {
  Deno.test(`assess() withholds a text that looks like none of the options: flag drift, rule out_of_scope (${score})`, () => {
    const { table } = smallTable({ ...SCOPED, scopeScore: score });
    const topic = table.byName.get("topic")!;
    const ask = (text: string) =>
      assess(
        table,
        stateOf(table),
        prepareText(table, stateOf(table), text),
        "topic",
        {},
        QUIET_GUARD,
      );
    // One word of every topic: the evidence for each option cancels out.
    const mixed = ask("invoice parcel refund password");
    assert.equal(topic.drift.scope.score, score);
    assert.ok(
      scopePValue(topic.drift.scope.values, mixed.scopeScore!) <=
        table.settings.drift.scope_p,
    );
    assert.equal(mixed.answer.flag, "drift");
    assert.equal(mixed.answer.driftRule, "out_of_scope");
    assert.match(reasonInWords(mixed), /looks like none of the options/);
    // A plain request of one topic passes the rule.
    const clear = ask("i need my parcel");
    assert.notEqual(clear.answer.driftRule, "out_of_scope");
    // Empty input still comes first.
    assert.equal(ask("").answer.flag, "empty_input");
    // The threshold was chosen with the rule in force (calibration answers it
    // withholds were never counted as certified): switched off at serving, the
    // same text would be certified. The rule is part of the certificate.
    const off = {
      ...table,
      settings: {
        ...table.settings,
        drift: { ...table.settings.drift, scope_p: 0 },
      },
    };
    const withoutRule = assess(
      off,
      stateOf(off),
      prepareText(off, stateOf(off), "invoice parcel refund password"),
      "topic",
      {},
      QUIET_GUARD,
    );
    assert.equal(withoutRule.answer.certified, true);
    assert.ok(
      topic.calibration.threshold! <
        smallTable().table.byName.get("topic")!.calibration.threshold!,
    );
  });
}

Deno.test("train() judges calibration with the out-of-scope rule, and stores the scores of choices of three or more and live candidates", () => {
  for (const score of SCOPE_SCORES) {
    const scoped = smallTable({ ...SCOPED, scopeScore: score });
    for (const q of scoped.table.questions) {
      const { values } = q.drift.scope;
      const applies = scopeApplies(q.options.length);
      assert.equal(q.drift.scope.score, applies ? score : null, q.name);
      assert.equal(values.length, applies ? q.drift.scores.length : 0, q.name);
      assert.ok(values.every((e, i, a) => i === 0 || a[i - 1]! <= e), "sorted");
      if (score === "spread") {
        assert.ok(values.every((e) => e <= 0), "a spread is at most 0");
      }
      assert.ok(
        q.calibration.candidates.length >= 2 &&
          q.calibration.candidates.length <= 16,
      );
    }
    const topic = scoped.table.byName.get("topic")!;
    assert.ok(
      topic.calibration.candidates.includes(topic.calibration.threshold!),
    );
  }
});
