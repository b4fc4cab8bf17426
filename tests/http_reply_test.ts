/**
 * The reply writers: numbers printed fast and right, the spec's fields in
 * the spec's order, probabilities that never name another winner, audit
 * ids, and a served table swapped between requests.
 */

import assert from "node:assert/strict";
import {
  assess,
  type Assessment,
  prepareText,
  probabilitiesOf,
  QUIET_GUARD,
  setThresholdInForce,
  type Table,
  TableState,
} from "../src/engine/mod.ts";
import { writeAltReply } from "../src/wire/altdecisions.ts";
import { appFor } from "../src/http/app.ts";
import { writeDecideAnswer, writeDecideReply } from "../src/wire/decide.ts";
import type { ModelRequest } from "../src/wire/decision_request.ts";
import { writeDecisionsReply } from "../src/wire/decisions.ts";
import { probabilityText } from "../src/wire/json_number.ts";
import { JsonWriter } from "../src/wire/json_writer.ts";
import { serviceTable } from "../src/wire/service_table.ts";
import { Service } from "../src/http/service.ts";
import { choiceAnswer, rng, smallTable, stateOf } from "./_fixtures.ts";

type Json = Record<string, unknown>;

const table: Table = { ...smallTable().table };
const served = serviceTable(table, undefined, stateOf(table));
const CLEAR = "i need my parcel";
const ask = (text: string, question: string, options?: string[]) =>
  assess(
    table,
    stateOf(table),
    prepareText(table, stateOf(table), text),
    question,
    { options },
    QUIET_GUARD,
  );

function written(write: (w: JsonWriter) => void): Json {
  const w = new JsonWriter(16);
  write(w);
  return JSON.parse(new TextDecoder().decode(w.view()));
}

Deno.test("probabilityText() prints 6 significant digits, as toPrecision(6) rounds, in JavaScript's plain or exponent form", () => {
  const cases: [number, string][] = [
    [1, "1"],
    [0, "0"],
    [0.5, "0.5"],
    [0.9999498826587676, "0.99995"],
    [0.9999996, "1"],
    [0.09999996, "0.1"],
    [0.123456789, "0.123457"],
    [0.000004581242990018716, "0.00000458124"],
    [9.999996e-7, "0.000001"],
    [8.789104062965426e-10, "8.7891e-10"],
    [1.5e-7, "1.5e-7"],
    [3e-12, "3e-12"],
  ];
  for (const [p, text] of cases) {
    assert.equal(probabilityText(p), text, String(p));
  }
  const random = rng(11);
  for (let i = 0; i < 20_000; i++) {
    const p = random() ** (1 + 40 * random());
    if (p < 1e-17) continue;
    assert.equal(
      Number(probabilityText(p)),
      Number(p.toPrecision(6)),
      String(p),
    );
  }
  // Below 1e-17 (other than 0), printed exactly.
  assert.equal(probabilityText(1e-20), "1e-20");
});

Deno.test("writeDecideAnswer() writes exactly the spec's Answer fields, in order", () => {
  const CHOICE = [
    "choice",
    "confidence",
    "certified",
    "flag",
    "radius",
    "probabilities",
  ];
  const YES_NO = [
    "answer",
    "confidence",
    "certified",
    "flag",
    "radius",
    "probability",
  ];
  const cases: [Assessment, string[]][] = [
    [ask(CLEAR, "topic"), CHOICE],
    [
      ask("invoice parcel refund password", "topic", ["billing", "refund"]),
      CHOICE,
    ],
    [ask(CLEAR, "topic", ["teleport"]), CHOICE],
    [ask("", "topic"), CHOICE],
    [ask("urgent help", "urgent"), YES_NO],
    [ask("", "urgent"), YES_NO],
    [ask(CLEAR, "coin"), YES_NO],
    [ask(CLEAR, "nope"), ["confidence", "certified", "flag", "radius", "hint"]],
  ];
  for (const [a, fields] of cases) {
    const json = written((w) => writeDecideAnswer(w, served, a));
    assert.deepEqual(Object.keys(json), fields, JSON.stringify(json));
    assert.equal(json.confidence, a.answer.confidence, "confidence is exact");
    assert.equal(json.certified, a.answer.certified);
    assert.equal(json.flag, a.answer.flag);
    assert.equal(json.radius, a.answer.radius);
    if (a.answer.kind === "choice") {
      assert.equal(json.choice, a.answer.choice);
      const printed = json.probabilities as Record<string, number>;
      const exact = probabilitiesOf(a.answer);
      assert.deepEqual(Object.keys(printed), Object.keys(exact));
      for (const [o, p] of Object.entries(exact)) {
        assert.ok(Math.abs(printed[o]! - p) <= 5e-6 * p + 1e-300, o);
      }
    }
    if (a.answer.kind === "yes_no") {
      assert.equal(json.answer, a.answer.answer);
      assert.equal(json.probability, a.answer.probability, "exact");
    }
  }
});

Deno.test("writeDecideAnswer() prints a rival that would round like the answer exactly, so the printed winner is the answer", () => {
  const base = ask(CLEAR, "topic");
  const options = table.byName.get("topic")!.options;
  // Two options 3e-8 apart: both print 0.4 at 6 digits.
  const p = options.map((_, i) =>
    i === 0
      ? 0.40000004
      : i === 1
      ? 0.40000001
      : 0.19999995 / (options.length - 2)
  );
  const choice = choiceAnswer(base.answer);
  const a: Assessment = {
    ...base,
    answer: {
      ...choice,
      choice: options[0]!,
      chosen: 0,
      probabilities: p,
      confidence: p[0]!,
    },
  };
  const printed = written((w) => writeDecideAnswer(w, served, a))
    .probabilities as Record<string, number>;
  assert.equal(printed[options[0]!], 0.40000004);
  assert.equal(printed[options[1]!], 0.40000001);
  const best = Object.entries(printed).sort((x, y) => y[1] - x[1])[0]![0];
  assert.equal(best, a.answer.choice);
  // Without a tie, the answer's own probability is rounded like the rest.
  const plain = written((w) => writeDecideAnswer(w, served, base))
    .probabilities as Record<string, number>;
  assert.equal(
    plain[choice.choice],
    Number(choice.probabilities[choice.chosen]!.toPrecision(6)),
  );
});

Deno.test("the reply writers add an audit id after the spec's fields, or in service", () => {
  const topic = ask(CLEAR, "topic");
  const urgent = ask(CLEAR, "urgent");
  const decide = written((w) =>
    writeDecideReply(
      w,
      served,
      { text: CLEAR, asks: null, exposed: false, model: null, top: null },
      [topic, urgent],
      12.5,
      ["a-1", undefined],
    )
  );
  const answers = decide.answers as Record<string, Json>;
  assert.deepEqual(Object.keys(answers.topic!).slice(-1), ["audit"]);
  assert.equal(answers.topic!.audit, "a-1");
  assert.ok(!("audit" in answers.urgent!));
  assert.equal(decide.latency_us, 12.5);

  const request: ModelRequest = {
    text: CLEAR,
    asks: [
      { name: "topic", options: undefined, type: "choice" },
      { name: "urgent", options: undefined, type: "noul" },
    ],
    exposed: false,
    model: "m",
    top: null,
  };
  const decisions = written((w) =>
    writeDecisionsReply(w, served, request, [topic, urgent], 3, [
      undefined,
      "b-2",
    ])
  );
  const list = decisions.answers as Json[];
  assert.deepEqual(list[1]!.service, {
    source: "table",
    certified: urgent.answer.certified,
    flag: urgent.answer.flag,
    audit: "b-2",
  });
  assert.deepEqual(Object.keys(list[0]!.service as Json), [
    "source",
    "certified",
    "flag",
  ]);
  const alt = written((w) =>
    writeAltReply(w, served, request, [topic, urgent], 3, ["c-3", undefined])
  );
  assert.equal(
    ((alt.answers as Record<string, Json>).topic!.service as Json).audit,
    "c-3",
  );
});

Deno.test("the reply writers escape any name: unknown questions and options, quotes, __proto__, non-ASCII", () => {
  const names = ['we"ird\\name', "__proto__", "é中🙂", "\u0000\n"];
  const request: ModelRequest = {
    text: CLEAR,
    asks: names.map((name) => ({ name, options: undefined, type: "choice" })),
    exposed: false,
    model: 'mo"del',
    top: null,
  };
  const answers = names.map((n) =>
    assess(
      table,
      stateOf(table),
      prepareText(table, stateOf(table), CLEAR),
      n,
      {},
      QUIET_GUARD,
    )
  );
  const decide = written((w) =>
    writeDecideReply(
      w,
      served,
      { ...request, asks: null, model: null },
      answers,
      1,
    )
  );
  assert.deepEqual(Object.keys(decide.answers as Json), names);
  const decisions = written((w) =>
    writeDecisionsReply(w, served, request, answers, 1)
  );
  assert.equal(decisions.model, 'mo"del');
  assert.deepEqual((decisions.answers as Json[]).map((a) => a.name), names);
  const narrowed = ask(CLEAR, "topic", ["shipping", 'tele"port', "__proto__"]);
  const json = written((w) => writeDecideAnswer(w, served, narrowed));
  assert.deepEqual(Object.keys(json.probabilities as Json), [
    "shipping",
    'tele"port',
    "__proto__",
  ]);
});

Deno.test("Service.swap() serves a new table from the next request on, without dropping one", async () => {
  const service = new Service({ table, bundlePath: "a" });
  const app = appFor(service);
  const decide = async () => {
    const res = await app.request("/v1/decide", {
      method: "POST",
      body: JSON.stringify({ state: CLEAR }),
    });
    assert.equal(res.status, 200);
    return ((await res.json()).answers as Record<string, Json>).topic!;
  };
  assert.equal((await decide()).certified, true);
  // The same weights with its threshold in force above every confidence: nothing certified.
  const strict: Table = { ...table };
  const strictState = new TableState(strict);
  setThresholdInForce(strict, strictState, "topic", 1);
  const inFlight = Promise.all(Array.from({ length: 20 }, () => decide()));
  service.swap(strict, undefined, 12.5, strictState);
  const during = await inFlight;
  assert.equal(during.length, 20);
  assert.equal((await decide()).flag, "low_confidence");
  const stats = await (await app.request("/v1/stats")).json();
  assert.equal(
    stats.bundle.questions[0].threshold,
    1,
    "stats show the threshold in force",
  );
  assert.equal(stats.counts.requests, 22);
  assert.equal(stats.bundle.load_ms, 12.5, "the new table's load time");
});
