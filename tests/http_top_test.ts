/**
 * `top` in decision bodies (`/v1/decide`, `/v1/decisions`,
 * `/v1/altdecisions`) and `predict --top`: only the k most probable options
 * of a choice answer are printed, the answer first, each printed exactly
 * as in the full reply; the answer, confidence, certification, flag and
 * radius do not change; without `top` (or with null) the reply is byte for
 * byte the one without the field.
 */

import assert from "node:assert/strict";
import { createApp } from "../src/http/app.ts";
import { topPositions } from "../src/wire/top_options.ts";
import { rng, smallTable, stateOf } from "./_fixtures.ts";

type Json = Record<string, unknown>;

const TEXTS = [
  "my invoice was overcharged",
  "where is my parcel, the courier never came",
  "refund my money and reset my password",
  "hello",
  "",
];

function app() {
  const table = smallTable().table;
  return createApp({ table, state: stateOf(table), bundlePath: "test" });
}

async function postText(
  a: ReturnType<typeof createApp>,
  path: string,
  body: unknown,
): Promise<{ status: number; text: string }> {
  const res = await a.request(path, {
    method: "POST",
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

/** A reply's text with its latency fields zeroed, so two replies compare byte for byte. */
function noLatency(text: string): string {
  return text.replace(/"latency_(us|ms)":[0-9.e+-]+/g, '"latency_$1":0');
}

Deno.test("topPositions() puts the answer first, then the most probable, ties in option order", () => {
  assert.deepEqual(topPositions([0.1, 0.3, 0.3, 0.3], 2, 3), [2, 1, 3]);
  assert.deepEqual(topPositions([0.1, 0.3, 0.3, 0.3], 2, 1), [2]);
  assert.deepEqual(topPositions([0.4, 0.6], 1, 1000), [1, 0]);
});

Deno.test("topPositions() picks the same options one by one (few) as by sorting (many)", () => {
  const random = rng(3);
  for (let round = 0; round < 200; round++) {
    const n = 1 + Math.floor(random() * 60);
    // Coarse values so that ties happen.
    const p = Array.from({ length: n }, () => Math.round(random() * 8) / 8);
    let chosen = 0;
    for (let i = 1; i < n; i++) if (p[i]! > p[chosen]!) chosen = i;
    const sorted = topPositions(p, chosen, n);
    const picked = topPositions(p, chosen, 16);
    assert.deepEqual(picked, sorted.slice(0, 16), JSON.stringify(p));
    assert.equal(new Set(sorted).size, n);
    for (let j = 2; j < sorted.length; j++) {
      assert.ok(p[sorted[j - 1]!]! >= p[sorted[j]!]!);
    }
  }
});

Deno.test("/v1/decide without top, or with top null, replies byte for byte as before", async () => {
  const a = app();
  for (const state of TEXTS) {
    const plain = await postText(a, "/v1/decide", { state });
    const nulled = await postText(a, "/v1/decide", { state, top: null });
    assert.equal(plain.status, 200);
    assert.equal(noLatency(nulled.text), noLatency(plain.text));
    // Every option, in option order.
    const topic = JSON.parse(plain.text).answers.topic;
    assert.deepEqual(
      Object.keys(topic.probabilities),
      smallTable().table.byName.get("topic")!.options,
    );
  }
});

Deno.test("/v1/decide with top prints the k most probable options, the answer first, as the full reply prints them", async (t) => {
  const a = app();
  for (const state of TEXTS) {
    const full = JSON.parse((await postText(a, "/v1/decide", { state })).text);
    const fullText = (await postText(a, "/v1/decide", { state })).text;
    for (const top of [1, 2, 3, 4, 50]) {
      await t.step(`${JSON.stringify(state)}, top ${top}`, async () => {
        const { status, text } = await postText(a, "/v1/decide", {
          state,
          top,
        });
        assert.equal(status, 200);
        const got = JSON.parse(text).answers;
        for (const q of Object.keys(full.answers)) {
          const f = full.answers[q] as Json;
          const g = got[q] as Json;
          const { probabilities: fp, ...fRest } = f;
          const { probabilities: gp, ...gRest } = g;
          // Answer, confidence, certified, flag, radius: unchanged.
          assert.deepEqual(gRest, fRest, q);
          if (fp === undefined) {
            assert.equal(gp, undefined);
            continue;
          }
          const fEntries = Object.entries(fp as Record<string, number>);
          const gEntries = Object.entries(gp as Record<string, number>);
          assert.equal(gEntries.length, Math.min(top, fEntries.length));
          assert.equal(gEntries[0]![0], f.choice, "the answer comes first");
          const rest = fEntries.filter(([o]) => o !== f.choice)
            .sort((x, y) => y[1] - x[1]);
          assert.deepEqual(
            gEntries.slice(1).map(([, p]) => p),
            rest.slice(0, top - 1).map(([, p]) => p),
          );
          for (const [o, p] of gEntries) {
            // Printed with the same digits as in the full reply.
            assert.ok(fullText.includes(`${JSON.stringify(o)}:${p}`), o);
          }
        }
      });
    }
  }
});

Deno.test("top narrows with criteria: the k most probable of the offered options", async () => {
  const a = app();
  const { text } = await postText(a, "/v1/decide", {
    state: "my invoice was overcharged and the parcel is late",
    questions: { topic: { criteria: ["shipping", "refund", "account"] } },
    top: 2,
  });
  const topic = JSON.parse(text).answers.topic;
  const keys = Object.keys(topic.probabilities);
  assert.equal(keys.length, 2);
  assert.equal(keys[0], topic.choice);
  for (const k of keys) {
    assert.ok(["shipping", "refund", "account"].includes(k));
  }
});

Deno.test("top in the two decision-model shapes: the array and the object hold the k best, the answer first", async () => {
  const a = app();
  const state = "where is my parcel, the courier never came";
  const decisions = JSON.parse(
    (await postText(a, "/v1/decisions", {
      input: state,
      top: 2,
      questions: [{ type: "choice", name: "topic" }, {
        type: "noul",
        name: "urgent",
      }],
    })).text,
  );
  const [topic, urgent] = decisions.answers;
  assert.equal(topic.probabilities.length, 2);
  assert.equal(topic.probabilities[0].value, topic.choice);
  assert.equal(typeof urgent.noul, "number");
  const alt = JSON.parse(
    (await postText(a, "/v1/altdecisions", {
      state,
      top: 1,
      questions: { topic: { type: "choice" } },
    })).text,
  );
  assert.deepEqual(Object.keys(alt.answers.topic.probabilities), [
    alt.answers.topic.choice,
  ]);
  const plain = await postText(a, "/v1/altdecisions", {
    state,
    questions: { topic: { type: "choice" } },
  });
  const nulled = await postText(a, "/v1/altdecisions", {
    state,
    top: null,
    questions: { topic: { type: "choice" } },
  });
  assert.equal(noLatency(nulled.text), noLatency(plain.text));
});

Deno.test("a top that is not a whole number of at least 1 is a 400 naming it, in every shape", async () => {
  const a = app();
  const bodies = {
    "/v1/decide": { state: "x" },
    "/v1/decisions": { input: "x", questions: [] },
    "/v1/altdecisions": { state: "x", questions: {} },
  };
  for (const [path, body] of Object.entries(bodies)) {
    for (const top of [0, -1, 1.5, "3", true, [2]]) {
      const { status, text } = await postText(a, path, { ...body, top });
      assert.equal(status, 400, `${path} top ${JSON.stringify(top)}`);
      assert.match(
        JSON.parse(text).error,
        /^"top" must be a whole number, 1 or more, got /,
      );
    }
  }
  const { status, text } = await postText(a, "/v1/decide", {
    state: "x",
    top_k: 3,
  });
  assert.equal(status, 400);
  assert.match(JSON.parse(text).error, /did you mean "top"\?/);
});

Deno.test("top on a question nothing has taught a learning service yet answers 200, with no options to print", async () => {
  const { QuestionRegistry } = await import("../src/learn/mod.ts");
  const { tableWithoutQuestions } = await import("../src/engine/mod.ts");
  const table = tableWithoutQuestions();
  const registry = new QuestionRegistry();
  const a = createApp({
    table,
    state: stateOf(table),
    bundlePath: "test",
    learning: {
      registry,
      observe: () => {},
      stats: () => ({}) as never,
    },
  });
  for (
    const body of [
      { state: "where is my parcel", questions: { intent: {} }, top: 2 },
      { state: "where is my parcel", questions: { intent: null }, top: 1 },
    ]
  ) {
    const r = await postText(a, "/v1/decide", body);
    assert.equal(r.status, 200, r.text);
    const answer = (JSON.parse(r.text).answers as Json).intent as Json;
    assert.equal(answer.certified, false);
  }
  // Taught one option, the same request prints it.
  registry.observe("intent", "card_arrival");
  const r = await postText(a, "/v1/decide", {
    state: "where is my parcel",
    questions: { intent: {} },
    top: 2,
  });
  assert.equal(r.status, 200, r.text);
});
