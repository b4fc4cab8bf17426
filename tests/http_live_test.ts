/**
 * The live certificate in serving, in process (`app.request()`): audit ids
 * on the three decision shapes, `POST /v1/feedback` (audits, feedback,
 * traces, missed ids, bad bodies), and the live decision applied to the
 * table (a threshold refuted by audits is withdrawn).
 */

import assert from "node:assert/strict";
import { createApp } from "../src/http/app.ts";
import { DriftMonitor, QUIET_GUARD } from "../src/engine/drift.ts";
import { setThresholdInForce, thresholdInForce } from "../src/engine/state.ts";
import { prepareText } from "../src/engine/prepare.ts";
import { assessRequest } from "../src/wire/decision_request.ts";
import { LiveController } from "../src/live/controller.ts";
import { RECENT_ANSWERS } from "../src/live/recent_answers.ts";
import type { Table } from "../src/engine/table.ts";
import type { AppDeps } from "../src/http/service.ts";
import { FILLER_WORDS, smallTable, stateOf, TOPIC_WORDS } from "./_fixtures.ts";
import { missingTool, promtoolCheck } from "./_tools.ts";

type Json = Record<string, unknown>;

const CLEAR = "my invoice was overcharged";

/** A table of its own (the live certificate moves its thresholds). */
function freshTable(): Table {
  return { ...smallTable().table };
}

function app(extra: Partial<AppDeps> = {}) {
  const table = extra.table ?? freshTable();
  return createApp({
    table,
    state: stateOf(table),
    bundlePath: "test/bundle",
    monitor: new DriftMonitor({ ...table.settings.drift, delta: 1e-12 }),
    live: { auditRate: 1, auditSeed: 1 },
    ...extra,
  });
}

async function post(
  a: ReturnType<typeof createApp>,
  path: string,
  body: unknown,
) {
  const res = await a.request(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() as Json };
}

async function decideTopic(a: ReturnType<typeof createApp>, state = CLEAR) {
  const { json } = await post(a, "/v1/decide", {
    state,
    questions: { topic: {}, coin: {} },
  });
  return json.answers as Record<string, Json>;
}

Deno.test("a picked certified answer carries an audit id after the spec's fields; others carry none", async () => {
  const answers = await decideTopic(app());
  assert.equal(answers.topic!.certified, true);
  assert.deepEqual(Object.keys(answers.topic!), [
    "choice",
    "confidence",
    "certified",
    "flag",
    "radius",
    "probabilities",
    "audit",
  ]);
  assert.equal(typeof answers.topic!.audit, "string");
  assert.equal(answers.coin!.certified, false);
  assert.equal("audit" in answers.coin!, false);
  const off = await decideTopic(app({ live: { auditRate: 0 } }));
  assert.equal("audit" in off.topic!, false);
});

Deno.test("the decision-model shapes carry the audit id in service.audit", async () => {
  const a = app();
  const { json } = await post(a, "/v1/decisions", {
    input: CLEAR,
    questions: [{ type: "choice", name: "topic" }, {
      type: "predicate",
      name: "coin",
    }],
  });
  const [topic, coin] = json.answers as Json[];
  assert.equal(typeof (topic!.service as Json).audit, "string");
  assert.equal("audit" in (coin!.service as Json), false);
  const alt = await post(a, "/v1/altdecisions", {
    state: CLEAR,
    questions: { topic: { type: "choice" } },
  });
  const altTopic = (alt.json.answers as Record<string, Json>).topic!;
  assert.equal(typeof (altTopic.service as Json).audit, "string");
});

Deno.test("audit picks follow the seed and the rate alone", async () => {
  const picks = async (seed: number) => {
    const a = app({ live: { auditRate: 0.5, auditSeed: seed } });
    const out: boolean[] = [];
    for (let i = 0; i < 40; i++) {
      out.push("audit" in (await decideTopic(a)).topic!);
    }
    return out;
  };
  const first = await picks(3);
  assert.deepEqual(await picks(3), first);
  const share = first.filter(Boolean).length / first.length;
  assert.ok(share > 0.2 && share < 0.8, `share ${share}`);
});

Deno.test("/v1/feedback counts an audit once and reports unknown and reused ids", async () => {
  const a = app();
  const id = (await decideTopic(a)).topic!.audit as string;
  const first = await post(a, "/v1/feedback", {
    question: "topic",
    state: CLEAR,
    answer: "billing",
    audit: id,
  });
  assert.equal(first.status, 200);
  assert.deepEqual(first.json, {
    received: 1,
    kept: 0,
    not_labels: 0,
    audits: 1,
    feedback: 0,
    traces_only: 0,
    missed_audits: [],
    refused: [],
  });
  const again = await post(a, "/v1/feedback", [
    { question: "topic", state: CLEAR, answer: "billing", audit: id },
    { question: "topic", state: CLEAR, answer: "billing", audit: "nope" },
  ]);
  assert.deepEqual(again.json, {
    received: 2,
    kept: 0,
    not_labels: 1,
    audits: 0,
    feedback: 0,
    // An id nobody gave is no label, not even a trace.
    traces_only: 1,
    missed_audits: [
      { audit: id, reason: "answered" },
      { audit: "nope", reason: "unknown" },
    ],
    refused: [],
  });
  const stats = await (await a.request("/v1/stats")).json();
  assert.equal(stats.live.questions.topic.audited, 1);
});

Deno.test("/v1/feedback without an id: feedback on an uncertified eligible answer, a trace otherwise", async () => {
  const a = app();
  // Words of every topic: a low-confidence answer.
  const vague = "invoice parcel password refund";
  const answers = await decideTopic(a, vague);
  assert.equal(answers.topic!.flag, "low_confidence");
  const { json } = await post(a, "/v1/feedback", [
    { question: "topic", state: vague, answer: "shipping" },
    { question: "topic", state: CLEAR, answer: "billing" },
    { question: "coin", state: CLEAR, answer: true },
  ]);
  assert.deepEqual(json, {
    received: 3,
    kept: 0,
    not_labels: 0,
    audits: 0,
    feedback: 1,
    traces_only: 2,
    missed_audits: [],
    refused: [],
  });
});

Deno.test("/v1/feedback refuses bad bodies with 400 and counts nothing", async () => {
  const a = app();
  const id = (await decideTopic(a)).topic!.audit as string;
  const bad: unknown[] = [
    "not json",
    [],
    42,
    { state: CLEAR, answer: "billing" },
    { question: "nope", state: CLEAR, answer: "billing" },
    { question: "topic", answer: "billing" },
    { question: "topic", state: 3, answer: "billing" },
    { question: "topic", state: CLEAR },
    { question: "topic", state: CLEAR, answer: true },
    { question: "urgent", state: CLEAR, answer: "yes" },
    { question: "topic", state: CLEAR, answer: "billing", audit: 7 },
    [{ question: "topic", state: CLEAR, answer: "billing", audit: id }, 5],
  ];
  for (const body of bad) {
    const { status, json } = await post(a, "/v1/feedback", body);
    assert.equal(status, 400, JSON.stringify(body));
    assert.equal(typeof json.error, "string");
    assert.ok(!(json.error as string).includes("\n"));
  }
  const item = { question: "topic", state: CLEAR, answer: "billing" };
  const many = await post(a, "/v1/feedback", Array(1001).fill(item));
  assert.equal(many.status, 400);
  assert.match(
    many.json.error as string,
    /^The array holds 1001 items; one request may carry at most 1000 \(send the rest in further requests\)/,
  );
  // The id of the refused array was not used up.
  const { json } = await post(a, "/v1/feedback", {
    question: "topic",
    state: CLEAR,
    answer: "billing",
    audit: id,
  });
  assert.equal(json.audits, 1);
});

/** Decides `state` and answers each audit with a wrong option, until `stop` holds; returns the last topic answer. */
async function disagree(
  a: ReturnType<typeof createApp>,
  state: string,
  stop: (topic: Json) => boolean,
): Promise<Json> {
  for (let i = 0; i < 400; i++) {
    const topic = (await decideTopic(a, state)).topic!;
    if (stop(topic)) return topic;
    await post(a, "/v1/feedback", {
      question: "topic",
      state,
      answer: "shipping",
      audit: topic.audit,
    });
  }
  throw new Error(`${state}: the live certificate never moved`);
}

Deno.test("audits that keep disagreeing refute the bundle's threshold: a stricter one is served", async () => {
  const table = freshTable();
  const a = app({ table });
  const before = thresholdInForce(table, stateOf(table), "topic")!;
  const topic = await disagree(a, CLEAR, (t) => t.certified !== true);
  assert.equal(topic.flag, "low_confidence");
  assert.ok(thresholdInForce(table, stateOf(table), "topic")! > before);
  const stats = await (await a.request("/v1/stats")).json();
  assert.equal(stats.live.questions.topic.reason, "live_stricter");
  assert.ok(stats.live.questions.topic.audit_disagreements > 0);
});

Deno.test("audits that disagree even at the strictest threshold withdraw certification: flag drift", async () => {
  const table = freshTable();
  const a = app({ table });
  const sure = "invoice charged payment bill overcharged receipt fee";
  const first = (await decideTopic(a, sure)).topic!;
  assert.ok(
    (first.confidence as number) >= table.byName.get("topic")!.calibration
      .candidates[0]!,
    `confidence ${first.confidence}`,
  );
  const topic = await disagree(a, sure, (t) => t.flag === "drift");
  assert.equal(topic.certified, false);
  const { json } = await post(a, "/v1/playground", {
    text: sure,
    question: "topic",
  });
  assert.equal(json.certified, false);
  const stats = await (await a.request("/v1/stats")).json();
  assert.equal(stats.live.questions.topic.reason, "withdrawn");
  assert.equal(stats.live.questions.topic.threshold, null);
});

/** The metrics after one audit answered (the reference model disagreeing). */
async function auditedMetrics(): Promise<string> {
  const a = app();
  const id = (await decideTopic(a)).topic!.audit as string;
  await post(a, "/v1/feedback", {
    question: "topic",
    state: CLEAR,
    answer: "shipping",
    audit: id,
  });
  return await (await a.request("/metrics")).text();
}

Deno.test("/metrics shows the live certificate per question", async () => {
  const metrics = await auditedMetrics();
  assert.match(metrics, /^dtable_live_audits_total\{question="topic"\} 1$/m);
  assert.match(
    metrics,
    /^dtable_live_audit_disagreements_total\{question="topic"\} 1$/m,
  );
  assert.match(metrics, /^dtable_live_audit_rate 1$/m);
  assert.match(metrics, /^dtable_live_threshold\{question="topic"\} 0\.\d+$/m);
});

const noPromtool = missingTool(
  "http_live_test",
  "promtool",
  "apt-get install prometheus",
);

Deno.test({
  name: "/metrics with the live certificate passes promtool check metrics",
  ignore: noPromtool !== null,
}, async () => {
  const metrics = await auditedMetrics();
  const { code, report } = await promtoolCheck(metrics);
  assert.equal(code, 0, report);
  assert.equal(report.trim(), "", report);
});

Deno.test("the live section in words: threshold and why, audits, disagreements, the rate and its bound", async () => {
  const a = app();
  for (let i = 0; i < 30; i++) {
    const id = (await decideTopic(a)).topic!.audit as string;
    await post(a, "/v1/feedback", {
      question: "topic",
      state: CLEAR,
      answer: i === 0 ? "shipping" : "billing",
      audit: id,
    });
  }
  const stats = await (await a.request("/v1/stats")).json();
  const topic = stats.live.questions.topic;
  assert.match(
    topic.summary,
    /^threshold 0\.\d{3} \(bundle's\), 30 audits, 1 disagreed, live rate \d+\.\d% \(95% up to \d+\.\d%\)$/,
  );
  assert.equal(stats.live.pending_audits, 0);
  assert.equal(stats.live.enabled, true);
  const off = await (await app({ live: { auditRate: 0 } }).request("/v1/stats"))
    .json();
  assert.deepEqual(off.live.questions, {});
  assert.equal(off.live.enabled, false);
});

Deno.test("feedback without an id on an answer served uncertified counts it as served, even after the threshold moved", async () => {
  const table = freshTable();
  const a = app({ table });
  // Nothing certified: the answer is served uncertified (low_confidence).
  setThresholdInForce(table, stateOf(table), "topic", 1);
  const served = await decideTopic(a);
  assert.equal(served.topic!.flag, "low_confidence");
  // The threshold moves back: answered again now, it would be certified,
  // and feedback on it would be a trace only.
  setThresholdInForce(table, stateOf(table), "topic", 0);
  const first = await post(a, "/v1/feedback", {
    question: "topic",
    state: CLEAR,
    answer: served.topic!.choice,
  });
  assert.equal(first.json.feedback, 1, JSON.stringify(first.json));
  // Taken once: the same feedback again is judged on today's answer.
  const again = await post(a, "/v1/feedback", {
    question: "topic",
    state: CLEAR,
    answer: served.topic!.choice,
  });
  assert.equal(again.json.traces_only, 1, JSON.stringify(again.json));
});

Deno.test("LiveController remembers at most RECENT_ANSWERS uncertified answers, oldest dropped first", () => {
  const table = freshTable();
  const live = new LiveController({ auditRate: 1, auditSeed: 1 });
  live.serve(table, stateOf(table));
  setThresholdInForce(table, stateOf(table), "topic", 1);
  // Texts of known words only (a new word would be withheld as foreign, not
  // served uncertified), each different: three words of the fixture's.
  const words = [
    ...new Set([...FILLER_WORDS, ...Object.values(TOPIC_WORDS).flat()]),
  ];
  const textAt = (i: number) =>
    [0, 1, 2].map((d) =>
      words[Math.floor(i / Math.pow(words.length, d)) % words.length]!
    ).join(" ");
  // A few more than the cap (a rare text may be withheld, not remembered).
  const n = RECENT_ANSWERS + 100;
  for (let i = 0; i < n; i++) {
    const text = textAt(i);
    const answers = assessRequest(
      table,
      stateOf(table),
      prepareText(table, stateOf(table), text),
      {
        text,
        asks: [{ name: "topic", options: undefined, type: undefined }],
        exposed: false,
        model: null,
        top: null,
      },
      QUIET_GUARD,
    );
    live.recordDecisions(table, answers, text);
  }
  // Compare with booleans: a failed assert.equal would print the whole table.
  assert.ok(
    live.takeRecent("topic", textAt(0)) === undefined,
    "oldest dropped",
  );
  const last = live.takeRecent("topic", textAt(n - 1));
  assert.ok(last !== undefined && last.table === table, "newest kept");
  assert.ok(
    live.takeRecent("topic", textAt(n - 1)) === undefined,
    "taken once",
  );
});

Deno.test("POST /v1/live/reset starts a question afresh, and refuses an unknown field or question, or a server without the live certificate", async () => {
  const logs: string[] = [];
  const a = app({ log: (line) => logs.push(line) });
  // Lies on audits: the feedback check names them.
  for (let i = 0; i < 30; i++) {
    const answers = await decideTopic(a, `${CLEAR} ${i}`);
    const t = answers.topic!;
    if (t.audit === undefined) continue;
    await post(a, "/v1/feedback", {
      question: "topic",
      state: `${CLEAR} ${i}`,
      answer: t.choice === "billing" ? "shipping" : "billing",
      audit: t.audit,
    });
  }
  const stats = async () =>
    (await (await a.request("/v1/stats")).json()).live.questions.topic;
  const before = await stats();
  assert.ok(before.audited > 0);
  assert.equal(before.feedback_check.disagrees_too_much, true);
  // Said on stderr once, not only in the stats.
  const told = logs.filter((l) => /feedback turned suspect/.test(l));
  assert.equal(told.length, 1, logs.join("\n"));
  assert.match(
    told[0]!,
    /^warning: feedback turned suspect on topic: its feedback disagrees/,
  );
  assert.ok(before.estimate === null || before.estimate <= 1);
  const reset = await post(a, "/v1/live/reset", { question: "topic" });
  assert.equal(reset.status, 200);
  assert.deepEqual(reset.json, { reset: ["topic"], fleet: false, resets: 1 });
  const after = await stats();
  assert.equal(after.audited, 0);
  assert.equal(after.reason, "bundle");
  assert.equal(after.feedback_check.status, "ok");
  const unknown = await post(a, "/v1/live/reset", { question: "topik" });
  assert.equal(unknown.status, 400);
  assert.match(
    String(unknown.json.error),
    /Unknown question "topik" \(did you mean "topic"\?\)/,
  );
  const field = await post(a, "/v1/live/reset", { questoin: "topic" });
  assert.equal(field.status, 400);
  assert.match(String(field.json.error), /did you mean "question"/);
  const all = await post(a, "/v1/live/reset", {});
  assert.equal(all.status, 200);
  assert.equal((all.json.reset as string[]).length, 3);
  const off = app({ live: { auditRate: 0 } });
  const refused = await post(off, "/v1/live/reset", {});
  assert.equal(refused.status, 400);
  assert.match(String(refused.json.error), /live certificate is off/);
});
