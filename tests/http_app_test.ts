/**
 * The HTTP app in process (`app.request()`): shapes, body checks, errors,
 * statistics and the token guard, on the small synthetic table (`topic`
 * choice, `urgent` yes/no, uncalibrated `coin`).
 */

import assert from "node:assert/strict";
import { appFor, createApp } from "../src/http/app.ts";
import { Service } from "../src/http/service.ts";
import { fileToken, fixedToken } from "../src/http/token.ts";
import { MAX_BODY_BYTES } from "../src/wire/fields.ts";
import { DriftMonitor } from "../src/engine/mod.ts";
import { smallTable, tempDir } from "./_fixtures.ts";
import { INTERFACE_VERSION, TOOL_VERSION } from "../src/version.ts";

type Json = Record<string, unknown>;

const table = smallTable().table;
/** Online drift alarm effectively off, so these tests never see an alarm raised by earlier requests. */
const calmDrift = () =>
  new DriftMonitor({ ...table.settings.drift, delta: 1e-12 });

function app(extra: Partial<Parameters<typeof createApp>[0]> = {}) {
  return createApp({
    table,
    bundlePath: "test/bundle",
    monitor: calmDrift(),
    ...extra,
  });
}

async function post(
  a: ReturnType<typeof createApp>,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const res = await a.request(path, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return {
    status: res.status,
    headers: res.headers,
    json: await res.json() as Json,
  };
}

const CLEAR = "my invoice was overcharged";

Deno.test("/v1/decide answers every bundle question when the body names none", async () => {
  const { status, json } = await post(app(), "/v1/decide", { state: CLEAR });
  assert.equal(status, 200);
  const answers = json.answers as Record<string, Json>;
  assert.deepEqual(Object.keys(answers), ["topic", "urgent", "coin"]);
  assert.deepEqual(Object.keys(answers.topic!), [
    "choice",
    "confidence",
    "certified",
    "flag",
    "radius",
    "probabilities",
  ]);
  assert.deepEqual(Object.keys(answers.urgent!), [
    "answer",
    "confidence",
    "certified",
    "flag",
    "radius",
    "probability",
  ]);
  assert.equal(answers.topic!.choice, "billing");
  assert.equal(answers.topic!.certified, true);
  assert.equal(answers.topic!.flag, null);
  assert.equal(answers.urgent!.answer, false);
  assert.equal(answers.coin!.flag, "uncalibrated");
  assert.equal(typeof json.latency_us, "number");
  assert.deepEqual(Object.keys(json), ["answers", "latency_us"]);
});

Deno.test("/v1/decide serialises an object state to JSON before answering", async () => {
  const state = { message: "my parcel has not arrived", channel: "email" };
  const a = await post(app(), "/v1/decide", {
    state,
    questions: { topic: {} },
  });
  const b = await post(app(), "/v1/decide", {
    state: JSON.stringify(state),
    questions: { topic: {} },
  });
  assert.deepEqual(
    (a.json.answers as Json).topic,
    (b.json.answers as Json).topic,
  );
});

Deno.test("/v1/decide narrows a choice question to its criteria and renormalises", async () => {
  const { json } = await post(app(), "/v1/decide", {
    state: "my parcel has not arrived",
    questions: { topic: { criteria: ["shipping", "refund"] } },
  });
  const topic = (json.answers as Record<string, Json>).topic!;
  const p = topic.probabilities as Record<string, number>;
  assert.deepEqual(Object.keys(p).sort(), ["refund", "shipping"]);
  // Printed to 6 significant digits: each is within 5e-7 of its exact value.
  assert.ok(Math.abs(p.refund! + p.shipping! - 1) <= 1e-6);
  assert.deepEqual(Object.keys(json.answers as Json), ["topic"]);
});

Deno.test("/v1/decide answers a question the bundle does not know with flag unsupported", async () => {
  const { status, json } = await post(app(), "/v1/decide", {
    state: CLEAR,
    questions: { nope: null, topic: {} },
  });
  assert.equal(status, 200);
  const answers = json.answers as Record<string, Json>;
  assert.deepEqual(answers.nope, {
    confidence: 0,
    certified: false,
    flag: "unsupported",
    radius: null,
    hint:
      'The table has no question named "nope". Its questions are: topic, urgent, coin.',
  });
  assert.equal(answers.topic!.choice, "billing");
});

Deno.test("/v1/decide hints at the question a wrongly cased name meant", async () => {
  const { json } = await post(app(), "/v1/decide", {
    state: CLEAR,
    questions: { Topic: {}, urgnet: {} },
  });
  const answers = json.answers as Record<string, Json>;
  assert.equal(answers.Topic!.flag, "unsupported");
  assert.match(answers.Topic!.hint as string, /did you mean "topic"\?/);
  assert.match(answers.urgnet!.hint as string, /did you mean "urgent"\?/);
});

Deno.test("/v1/decide keeps a question named __proto__ as a plain answer key", async () => {
  const { json } = await post(
    app(),
    "/v1/decide",
    '{"state": "x y", "questions": {"__proto__": {}}}',
  );
  const answers = json.answers as Json;
  assert.ok(Object.hasOwn(answers, "__proto__"));
  assert.equal(
    (Object.getOwnPropertyDescriptor(answers, "__proto__")!.value as Json).flag,
    "unsupported",
  );
});

Deno.test("/v1/decide never certifies an empty text", async () => {
  const { json } = await post(app(), "/v1/decide", { state: "" });
  for (const a of Object.values(json.answers as Record<string, Json>)) {
    assert.equal(a.certified, false);
    assert.equal(a.flag, "empty_input");
  }
});

const DECIDE_BAD_BODIES: [string, string, RegExp][] = [
  ["invalid JSON", "{state:", /not valid JSON/],
  ["an empty body", "", /body is empty/],
  ["an array", "[]", /must be a JSON object, got an array/],
  ["null", "null", /must be a JSON object, got null/],
  ["a number", "42", /must be a JSON object, got a number/],
  ["no state", '{"questions": {}}', /"state" is missing/],
  [
    "a number state",
    '{"state": 3}',
    /"state" must be a string or a JSON object, got a number/,
  ],
  [
    "an array state",
    '{"state": ["a"]}',
    /"state" must be a string or a JSON object, got an array/,
  ],
  ["a null state", '{"state": null}', /got null/],
  [
    "questions as an array",
    '{"state": "a", "questions": ["topic"]}',
    /"questions" must be an object, got an array/,
  ],
  [
    "a question entry as a string",
    '{"state": "a", "questions": {"topic": "x"}}',
    /"questions.topic" must be an object/,
  ],
  [
    "criteria as a string",
    '{"state": "a", "questions": {"topic": {"criteria": "x"}}}',
    /criteria" must be an array/,
  ],
  [
    "criteria holding a number",
    '{"state": "a", "questions": {"topic": {"criteria": [1]}}}',
    /criteria\[0\]" must be a string/,
  ],
  [
    "exposed as a string",
    '{"state": "a", "exposed": "yes"}',
    /"exposed" must be true or false/,
  ],
];

Deno.test("/v1/decide refuses a malformed body with 400 and one error field saying what body is needed", async (t) => {
  const a = app();
  for (const [name, body, pattern] of DECIDE_BAD_BODIES) {
    await t.step(name, async () => {
      const { status, json } = await post(a, "/v1/decide", body);
      assert.equal(status, 400);
      assert.deepEqual(Object.keys(json), ["error"]);
      assert.match(json.error as string, pattern);
      assert.match(
        json.error as string,
        /Send a JSON object \{"state": string or object/,
      );
    });
  }
});

Deno.test("/v1/decisions answers in the decisions-API shape, in question order", async () => {
  const { status, json } = await post(app(), "/v1/decisions", {
    model: "gpt-x",
    input: CLEAR,
    questions: [
      {
        type: "choice",
        name: "topic",
        instructions: "which topic",
        choices: [{ value: "billing" }, { value: "refund" }],
      },
      { type: "predicate", name: "urgent", instructions: "urgent?" },
      { type: "noul", name: "urgent", instructions: "urgent?" },
      { type: "score", name: "topic", instructions: "rate it" },
      { type: "choice", name: "unknown", instructions: "?" },
      { type: "choice", name: "urgent", instructions: "kind mismatch" },
      { type: "predicate", name: "topic", instructions: "kind mismatch" },
    ],
  });
  assert.equal(status, 200);
  assert.deepEqual(Object.keys(json), [
    "object",
    "model",
    "answers",
    "usage",
    "service",
  ]);
  assert.equal(json.object, "decision");
  assert.equal(json.model, "gpt-x");
  assert.deepEqual(json.usage, {
    input_tokens: 0,
    output_tokens: 0,
    total_tokens: 0,
  });
  const service = json.service as Json;
  assert.equal(service.source, "table");
  assert.equal(typeof service.latency_us, "number");
  const [choice, predicate, noul, score, unknown, mismatch1, mismatch2] = json
    .answers as Json[];
  assert.deepEqual(Object.keys(choice!), [
    "type",
    "name",
    "choice",
    "confidence",
    "probabilities",
    "service",
  ]);
  assert.equal(choice!.choice, "billing");
  const probabilities = choice!.probabilities as {
    value: string;
    probability: number;
  }[];
  assert.deepEqual(probabilities.map((p) => p.value).sort(), [
    "billing",
    "refund",
  ]);
  assert.deepEqual(choice!.service, {
    source: "table",
    certified: true,
    flag: null,
  });
  assert.deepEqual(Object.keys(predicate!), [
    "type",
    "name",
    "confidence",
    "probability",
    "service",
  ]);
  assert.equal(predicate!.type, "predicate");
  assert.ok((predicate!.probability as number) < 0.5);
  assert.deepEqual(Object.keys(noul!), [
    "type",
    "name",
    "confidence",
    "probability",
    "noul",
    "answer",
    "service",
  ]);
  assert.equal(noul!.noul, predicate!.probability);
  assert.equal(noul!.answer, false);
  for (const u of [score, unknown, mismatch1, mismatch2]) {
    assert.deepEqual((u!.service as Json).flag, "unsupported");
    assert.equal((u!.service as Json).certified, false);
    assert.equal(u!.confidence, 0);
  }
  assert.equal(score!.type, "score");
});

Deno.test("/v1/decisions echoes `table` as the model when the body names none", async () => {
  const { json } = await post(app(), "/v1/decisions", {
    input: CLEAR,
    questions: [],
  });
  assert.equal(json.model, "table");
  assert.deepEqual(json.answers, []);
});

Deno.test("/v1/decisions refuses a malformed body with 400", async (t) => {
  const a = app();
  const bodies: [string, unknown, RegExp][] = [
    ["no input", { questions: [] }, /"input" is missing/],
    [
      "an object input",
      { input: {}, questions: [] },
      /"input" must be a string/,
    ],
    ["no questions", { input: "x" }, /"questions" is missing/],
    [
      "questions as an object",
      { input: "x", questions: {} },
      /"questions" must be an array/,
    ],
    ["a question without a type", {
      input: "x",
      questions: [{ name: "topic" }],
    }, /questions\[0\].type" is missing/],
    ["a question without a name", {
      input: "x",
      questions: [{ type: "choice" }],
    }, /questions\[0\].name" is missing/],
    [
      "a number model",
      { model: 3, input: "x", questions: [] },
      /"model" must be a string/,
    ],
    ["choices as a string", {
      input: "x",
      questions: [{ type: "choice", name: "topic", choices: "a" }],
    }, /choices" must be an array/],
    ["a choice without a value", {
      input: "x",
      questions: [{ type: "choice", name: "topic", choices: [{}] }],
    }, /choices\[0\].value" must be a string/],
  ];
  for (const [name, body, pattern] of bodies) {
    await t.step(name, async () => {
      const { status, json } = await post(a, "/v1/decisions", body);
      assert.equal(status, 400);
      assert.deepEqual(Object.keys(json), ["error"]);
      assert.match(json.error as string, pattern);
      assert.match(
        json.error as string,
        /Send a JSON object \{"model"\?: string, "input": string/,
      );
    });
  }
});

Deno.test("/v1/altdecisions answers in the alternate shape, keyed by question", async () => {
  const { status, json } = await post(app(), "/v1/altdecisions", {
    model: "alt-1",
    state: CLEAR,
    questions: {
      topic: {
        type: "choice",
        instructions: "which",
        criteria: { billing: "money owed", refund: "money back" },
      },
      urgent: { type: "noul", instructions: "urgent?" },
      sc: { type: "score", instructions: "rate" },
    },
  });
  assert.equal(status, 200);
  assert.deepEqual(Object.keys(json), [
    "model",
    "answers",
    "latency_ms",
    "service",
  ]);
  assert.equal(json.model, "alt-1");
  const service = json.service as Json;
  assert.equal(service.source, "table");
  // The same time in milliseconds (printed without binary-fraction noise).
  assert.ok(
    Math.abs(
      (json.latency_ms as number) - (service.latency_us as number) / 1000,
    ) < 1e-12,
  );
  assert.ok(String(json.latency_ms).length <= 12, String(json.latency_ms));
  const answers = json.answers as Record<string, Json>;
  assert.deepEqual(Object.keys(answers), ["topic", "urgent", "sc"]);
  assert.deepEqual(Object.keys(answers.topic!), [
    "type",
    "choice",
    "confidence",
    "probabilities",
    "service",
  ]);
  assert.deepEqual(Object.keys(answers.topic!.probabilities as Json).sort(), [
    "billing",
    "refund",
  ]);
  assert.deepEqual(Object.keys(answers.urgent!), [
    "type",
    "confidence",
    "probability",
    "noul",
    "answer",
    "service",
  ]);
  assert.equal(answers.urgent!.answer, false);
  assert.deepEqual(answers.sc, {
    type: "score",
    confidence: 0,
    hint:
      'The table has no question named "sc". Its questions are: topic, urgent, coin.',
    service: { source: "table", certified: false, flag: "unsupported" },
  });
});

Deno.test("/v1/altdecisions refuses a malformed body with 400", async (t) => {
  const a = app();
  const bodies: [string, unknown, RegExp][] = [
    ["no state", { questions: {} }, /"state" is missing/],
    ["a number state", { state: 1, questions: {} }, /"state" must be a string/],
    ["no questions", { state: "x" }, /"questions" is missing/],
    [
      "questions as an array",
      { state: "x", questions: [] },
      /"questions" must be an object/,
    ],
    [
      "a question without a type",
      { state: "x", questions: { topic: {} } },
      /questions.topic.type" is missing/,
    ],
    ["criteria as a string", {
      state: "x",
      questions: { topic: { type: "choice", criteria: "a" } },
    }, /criteria" must be an object/],
    ["a criterion description as a number", {
      state: "x",
      questions: { topic: { type: "choice", criteria: { a: 1 } } },
    }, /criteria.a" must be a string/],
  ];
  for (const [name, body, pattern] of bodies) {
    await t.step(name, async () => {
      const { status, json } = await post(a, "/v1/altdecisions", body);
      assert.equal(status, 400);
      assert.deepEqual(Object.keys(json), ["error"]);
      assert.match(json.error as string, pattern);
    });
  }
});

Deno.test("/v1/playground explains an answer without counting it as a decision", async () => {
  const monitor = calmDrift();
  const a = app({ monitor });
  const { status, json } = await post(a, "/v1/playground", {
    question: "topic",
    text: CLEAR,
  });
  assert.equal(status, 200);
  assert.deepEqual(Object.keys(json), [
    "question",
    "answer",
    "confidence",
    "threshold",
    "alpha",
    "certified",
    "flag",
    "reason",
    "radius",
    "top",
  ]);
  assert.equal(json.answer, "billing");
  assert.equal(json.certified, true);
  assert.match(json.reason as string, /^Certified/);
  const top = json.top as { option: string; probability: number }[];
  assert.equal(top.length, 3);
  assert.equal(top[0]!.option, "billing");
  assert.equal(
    monitor.state("topic").observed,
    0,
    "the playground must not feed the drift guard",
  );
  const stats = await (await a.request("/v1/stats")).json();
  assert.equal(stats.counts.requests, 0);
  assert.equal(stats.counts.answers, 0);
  assert.equal(stats.counts.playground, 1);
  assert.deepEqual(stats.recent, []);
});

Deno.test("/v1/playground needs a question unless the bundle has exactly one", async () => {
  const a = app();
  const missing = await post(a, "/v1/playground", { text: CLEAR });
  assert.equal(missing.status, 400);
  assert.match(
    missing.json.error as string,
    /"question" is missing and the bundle has 3 questions/,
  );
  const unknown = await post(a, "/v1/playground", {
    question: "nope",
    text: CLEAR,
  });
  assert.equal(unknown.status, 200);
  assert.equal(unknown.json.flag, "unsupported");
  assert.equal(unknown.json.certified, false);
  assert.match(
    unknown.json.reason as string,
    /no question named "nope"\. Its questions are: topic, urgent, coin\./,
  );
  const cased = await post(a, "/v1/playground", {
    question: "TOPIC",
    text: CLEAR,
  });
  assert.match(cased.json.reason as string, /did you mean "topic"\?/);
  const noText = await post(a, "/v1/playground", { question: "topic" });
  assert.equal(noText.status, 400);
  const single = {
    ...table,
    questions: [table.questions[0]!],
    byName: new Map([["topic", table.questions[0]!]]),
  };
  const one = await post(
    createApp({ table: single, bundlePath: "x" }),
    "/v1/playground",
    { text: CLEAR },
  );
  assert.equal(one.status, 200);
  assert.equal(one.json.question, "topic");
});

Deno.test("createApp() answers unknown routes with 404 and wrong methods with 405, in JSON", async () => {
  const a = app();
  const nf = await a.request("/v2/decide", { method: "POST", body: "{}" });
  assert.equal(nf.status, 404);
  assert.match((await nf.json()).error, /No route POST \/v2\/decide/);
  const wrong = await a.request("/v1/decide");
  assert.equal(wrong.status, 405);
  assert.equal(wrong.headers.get("allow"), "POST");
  assert.match((await wrong.json()).error, /accepts POST, not GET/);
  const put = await a.request("/v1/stats", { method: "PUT" });
  assert.equal(put.status, 405);
  assert.equal(put.headers.get("allow"), "GET, HEAD");
  await put.body?.cancel();
  const head = await a.request("/v1/health", { method: "HEAD" });
  assert.equal(head.status, 200);
  await head.body?.cancel();
});

Deno.test("an unexpected failure on a decision route is a 500 with a generic message, logged with its route and counted", async () => {
  const logged: string[] = [];
  const service = new Service({
    table,
    bundlePath: "test/bundle",
    monitor: calmDrift(),
    log: (m) => logged.push(m),
  });
  service.live.recordDecisions = () => {
    throw new Error("the live certificate broke");
  };
  const a = appFor(service);
  for (
    const [path, body] of [
      ["/v1/decide", { state: CLEAR }],
      ["/v1/decisions", { input: CLEAR, questions: [] }],
    ] as const
  ) {
    const res = await post(a, path, body);
    assert.equal(res.status, 500);
    assert.deepEqual(res.json, { error: "Internal server error" });
    assert.equal(res.headers.get("content-type"), "application/json");
  }
  assert.equal(logged.length, 2);
  assert.match(
    logged[0]!,
    /^Internal error on POST \/v1\/decide: Error: the live certificate broke\n\s+at /,
  );
  assert.match(logged[1]!, /^Internal error on POST \/v1\/decisions: /);
  const stats = await (await a.request("/v1/stats")).json();
  assert.equal(stats.counts.requests, 0, "no decision was recorded");
  assert.equal(stats.counts.errors, 2);
  const metrics = await (await a.request("/metrics")).text();
  assert.match(
    metrics,
    /^dtable_http_responses_total\{route="\/v1\/decide",code="500"\} 1$/m,
  );
});

Deno.test("/v1/health lists the questions and the versions", async () => {
  const res = await app().request("/v1/health");
  const { bundle_id, ...rest } = await res.json();
  assert.deepEqual(rest, {
    ok: true,
    questions: ["topic", "urgent", "coin"],
    version: TOOL_VERSION,
    interface_version: INTERFACE_VERSION,
  });
  assert.match(bundle_id, /^[0-9a-f]{64}$/);
});

Deno.test("GET / serves the dashboard page as HTML", async () => {
  const res = await app({ dashboardHtml: "<!doctype html><title>t</title>" })
    .request("/");
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type")!, /^text\/html/);
  assert.equal(await res.text(), "<!doctype html><title>t</title>");
  const real = await app().request("/");
  assert.match(await real.text(), /<html/i);
});

Deno.test("createApp() refuses a body over 1 MiB with 413 before reading it", async (t) => {
  const a = app();
  await t.step("declared by Content-Length", async () => {
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        pulled++;
        c.enqueue(new Uint8Array(1024));
      },
    });
    const req = new Request("http://localhost/v1/decide", {
      method: "POST",
      body,
      headers: { "content-length": String(MAX_BODY_BYTES + 1) },
    });
    const res = await a.request(req);
    assert.equal(res.status, 413);
    assert.match((await res.json()).error, /larger than 1048576 bytes/);
    assert.ok(pulled <= 2, `read ${pulled} chunks of a refused body`);
    await body.cancel().catch(() => {});
  });
  await t.step("streamed without a length", async () => {
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent > 4 * MAX_BODY_BYTES) return c.close();
        sent += 65536;
        c.enqueue(new Uint8Array(65536).fill(32));
      },
    });
    const res = await a.request(
      new Request("http://localhost/v1/decide", { method: "POST", body }),
    );
    assert.equal(res.status, 413);
    await res.body?.cancel();
    assert.ok(
      sent < 2 * MAX_BODY_BYTES,
      `read ${sent} bytes of a refused body`,
    );
  });
  await t.step("exactly 1 MiB is accepted", async () => {
    const filler = " ".repeat(MAX_BODY_BYTES - '{"state": "hi"}'.length);
    const res = await post(a, "/v1/decide", `{"state": "hi"}${filler}`);
    assert.equal(res.status, 200);
  });
});

Deno.test("/v1/stats counts requests, answers, deferrals and errors consistently", async () => {
  const a = createApp({
    table,
    bundlePath: "test/bundle",
    monitor: calmDrift(),
    costPerCall: 0.002,
    llmLatencyMs: 800,
  });
  await post(a, "/v1/decide", { state: CLEAR });
  await post(a, "/v1/decisions", {
    input: CLEAR,
    questions: [{ type: "choice", name: "topic" }, {
      type: "score",
      name: "s",
    }],
  });
  await post(a, "/v1/altdecisions", {
    state: "",
    questions: { urgent: { type: "predicate" } },
  });
  await post(a, "/v1/decide", "{");
  await (await a.request("/nope")).body?.cancel();
  const s = await (await a.request("/v1/stats")).json();
  assert.equal(s.bundle.path, "test/bundle");
  assert.deepEqual(s.bundle.questions.map((q: Json) => q.name), [
    "topic",
    "urgent",
    "coin",
  ]);
  assert.deepEqual(Object.keys(s.bundle.questions[0]), [
    "name",
    "kind",
    "options",
    "threshold",
    "alpha",
  ]);
  assert.equal(s.keep_text, false);
  assert.equal(s.counts.requests, 3);
  assert.equal(s.counts.answers, 3 + 2 + 1);
  assert.equal(s.counts.certified + s.counts.deferred, s.counts.answers);
  assert.equal(s.counts.errors, 2);
  const reasons = Object.values(s.deferral_reasons as Record<string, number>)
    .reduce((x, y) => x + y, 0);
  assert.equal(reasons, s.counts.deferred);
  assert.equal(s.deferral_reasons.unsupported, 1);
  assert.equal(s.deferral_reasons.empty_input, 1);
  assert.equal(s.deferral_reasons.uncalibrated, 1);
  assert.equal(s.share_answered, s.counts.certified / s.counts.answers);
  assert.equal(s.per_question.topic.answers, 2);
  assert.equal(s.per_question.topic.certified, 2);
  assert.equal(s.per_question.topic.share_answered, 1);
  assert.equal(s.latency_us.count, 3);
  assert.ok(
    s.latency_us.p50 <= s.latency_us.p90 &&
      s.latency_us.p90 <= s.latency_us.p99 &&
      s.latency_us.p99 <= s.latency_us.max,
  );
  assert.ok(s.rate.requests_per_s > 0);
  assert.equal(s.savings.calls_saved, s.counts.certified);
  assert.equal(s.savings.cost_per_call, 0.002);
  assert.equal(s.savings.llm_latency_ms, 800);
  assert.ok(
    Math.abs(s.savings.money_saved - 0.002 * s.counts.certified) < 1e-12,
  );
  assert.ok(
    Math.abs(s.savings.time_saved_s - 0.8 * s.counts.certified) < 1e-12,
  );
  assert.deepEqual(Object.keys(s.drift.topic), [
    "status",
    "observed",
    "alarmed_at",
    "evidence",
    "alarm_level",
    "alarms",
    "clears",
    "since",
  ]);
  assert.equal(s.recent.length, 6);
  assert.equal(s.recent[0].route, "/v1/altdecisions");
  assert.equal(s.recent[5].route, "/v1/decide");
  assert.deepEqual(Object.keys(s.recent[0]), [
    "at",
    "route",
    "question",
    "answer",
    "confidence",
    "certified",
    "flag",
    "radius",
  ]);
  assert.ok(!("text" in s.recent[0]), "no input text is kept by default");
});

Deno.test("/v1/stats reports null shares and percentiles before any answer", async () => {
  const s = await (await app().request("/v1/stats")).json();
  assert.equal(s.share_answered, null);
  assert.deepEqual(s.latency_us, {
    count: 0,
    p50: null,
    p90: null,
    p99: null,
    max: null,
  });
  assert.equal(s.per_question.topic.share_answered, null);
  assert.deepEqual(s.savings, {
    llm_latency_ms: null,
    cost_per_call: null,
    calls_saved: 0,
    time_saved_s: null,
    money_saved: null,
  });
});

Deno.test("/v1/stats keeps input text of recent decisions only with keepText, newest first, at most 50", async () => {
  const a = app({ keepText: true });
  for (let i = 0; i < 30; i++) {
    await post(a, "/v1/decide", {
      state: `invoice number ${i}`,
      questions: { topic: {}, urgent: {} },
    });
  }
  const s = await (await a.request("/v1/stats")).json();
  assert.equal(s.keep_text, true);
  assert.equal(s.recent.length, 50);
  assert.equal(s.recent[0].text, "invoice number 29");
  assert.equal(s.recent[0].question, "urgent");
  assert.equal(s.recent[1].question, "topic");
  assert.equal(s.recent[49].text, "invoice number 5");
});

Deno.test("/metrics exposes counters and the latency histogram in Prometheus text", async () => {
  const a = app();
  await post(a, "/v1/decide", { state: CLEAR });
  const res = await a.request("/metrics");
  assert.match(res.headers.get("content-type")!, /^text\/plain; version=0.0.4/);
  const text = await res.text();
  assert.match(
    text,
    /^dtable_decision_requests_total\{route="\/v1\/decide"\} 1$/m,
  );
  assert.match(text, /^dtable_answers_total 3$/m);
  assert.match(text, /^dtable_decision_latency_seconds_count 1$/m);
  assert.match(
    text,
    /^dtable_decision_latency_seconds_bucket\{le="\+Inf"\} 1$/m,
  );
  assert.match(text, /^dtable_drift_alarm\{question="topic"\} 0$/m);
  assert.match(text, /^# TYPE dtable_decision_latency_seconds histogram$/m);
});

const TOKEN = "s3cret-token-é";
const basic = (user: string, password: string) =>
  "Basic " +
  btoa(String.fromCharCode(...new TextEncoder().encode(`${user}:${password}`)));

Deno.test("the token check lets a request through only with the token, in any of the three forms", async (t) => {
  const a = app({ token: fixedToken(TOKEN, "test") });
  const cases: [string, Record<string, string>, number][] = [
    ["no credentials", {}, 401],
    ["X-Service-Token", { "x-service-token": TOKEN }, 200],
    ["a wrong X-Service-Token", { "x-service-token": "nope" }, 401],
    ["a token prefix", { "x-service-token": TOKEN.slice(0, -1) }, 401],
    ["Bearer", { authorization: `Bearer ${TOKEN}` }, 200],
    ["lower-case bearer", { authorization: `bearer ${TOKEN}` }, 200],
    ["a wrong Bearer", { authorization: "Bearer nope" }, 401],
    ["Basic with any user", { authorization: basic("anyone", TOKEN) }, 200],
    ["Basic with an empty user", { authorization: basic("", TOKEN) }, 200],
    ["Basic with the token as user", { authorization: basic(TOKEN, "x") }, 401],
    ["malformed Basic", { authorization: "Basic !!!" }, 401],
    ["a wrong header and a right Bearer", {
      "x-service-token": "nope",
      authorization: `Bearer ${TOKEN}`,
    }, 200],
  ];
  for (const [name, headers, expected] of cases) {
    await t.step(name, async () => {
      for (
        const [method, path] of [["POST", "/v1/decide"], ["GET", "/v1/stats"], [
          "GET",
          "/",
        ], ["GET", "/metrics"]] as const
      ) {
        const res = await a.request(path, {
          method,
          headers,
          ...(method === "POST"
            ? { body: JSON.stringify({ state: "x" }) }
            : {}),
        });
        assert.equal(res.status, expected, `${method} ${path}`);
        if (expected === 401) {
          const body = await res.json();
          assert.deepEqual(Object.keys(body), ["error"]);
          assert.match(body.error, /access token/);
        } else await res.body?.cancel();
      }
    });
  }
  await t.step("health needs no token", async () => {
    const res = await a.request("/v1/health");
    assert.equal(res.status, 200);
    await res.body?.cancel();
  });
});

Deno.test("the token check asks browsers for a Basic login and API clients for a Bearer token", async () => {
  const a = app({ token: fixedToken(TOKEN, "test") });
  for (const path of ["/", "/v1/stats", "/metrics"]) {
    const res = await a.request(path);
    assert.equal(res.status, 401);
    assert.match(
      res.headers.get("www-authenticate")!,
      /^Basic realm="decision tables"/,
    );
    await res.body?.cancel();
  }
  const api = await a.request("/v1/decide", { method: "POST", body: "{}" });
  assert.equal(api.status, 401);
  assert.match(api.headers.get("www-authenticate")!, /^Bearer realm=/);
  await api.body?.cancel();
});

Deno.test("fileToken() re-reads the token file on every request and fails closed when it is emptied", async () => {
  await using dir = await tempDir();
  const file = `${dir.path}/token`;
  await Deno.writeTextFile(file, "first\n");
  const warnings: string[] = [];
  const a = app({ token: fileToken(file, { warn: (m) => warnings.push(m) }) });
  const status = async (token: string) => {
    const res = await a.request("/v1/stats", {
      headers: { "x-service-token": token },
    });
    await res.body?.cancel();
    return res.status;
  };
  assert.equal(await status("first"), 200);
  await Deno.writeTextFile(file, "second");
  assert.equal(await status("first"), 401);
  assert.equal(await status("second"), 200);
  await Deno.writeTextFile(file, "  \n");
  assert.equal(await status("second"), 401);
  assert.equal(await status(""), 401);
  const noHeader = await a.request("/v1/stats");
  assert.equal(noHeader.status, 401);
  await noHeader.body?.cancel();
  assert.equal(warnings.length, 1, "one warning when the file turns empty");
  await Deno.remove(file);
  assert.equal(await status("second"), 401);
  await Deno.writeTextFile(file, "third");
  assert.equal(await status("third"), 200);
  const health = await a.request("/v1/health");
  assert.equal(health.status, 200);
  await health.body?.cancel();
});

Deno.test("createApp() keeps every decision reply intact when replies in flight are written one after another into one writer", async () => {
  const texts = [
    "i need my parcel",
    "refund my invoice now",
    "password reset please",
    "urgent my parcel is lost and my invoice is wrong",
  ];
  const a = app();
  const one = async (text: string) => {
    const res = await a.request("/v1/decide", {
      method: "POST",
      body: JSON.stringify({ state: text }),
    });
    // Read later, after other replies were written.
    await new Promise((r) => setTimeout(r, 1));
    return JSON.parse(await res.text()).answers;
  };
  const alone = [];
  for (const t of texts) alone.push(await one(t));
  const together = await Promise.all(texts.map(one));
  assert.deepEqual(together, alone);
  assert.notDeepEqual(together[0], together[1]);
});
