/**
 * Every flag the engine can give, through every request shape of a real
 * server: `/v1/decide`, `/v1/decisions`, `/v1/altdecisions` (and the
 * playground where the flag can arise there). The engine decides the
 * flags; these tests check that each shape carries them unchanged, with
 * `certified` true exactly when the flag is null.
 *
 * Servers run with the online drift alarm effectively off
 * (`--drift-delta 1e-12`) except in the drift scenario, so ambiguous or
 * foreign texts sent by one step cannot raise an alarm that changes the
 * flags of the next.
 */

import assert from "node:assert/strict";
import { tempDir } from "./_fixtures.ts";
import {
  getText,
  postJson,
  type RunningServer,
  startServer,
  writeTestBundle,
} from "./_http_helpers.ts";

type Json = Record<string, unknown>;

interface FlagCase {
  flag: string | null;
  question: string;
  text: string;
  options?: string[];
  exposed?: boolean;
}

const CLEAR = "my invoice was overcharged";
const AMBIGUOUS = "invoice parcel password refund";
const FOREIGN = "zqxj vbnw plokm trdfg";

/** Cases for a bundle with default settings. */
const DEFAULT_CASES: FlagCase[] = [
  { flag: null, question: "topic", text: CLEAR },
  {
    flag: null,
    question: "topic",
    text: CLEAR,
    options: ["billing", "refund"],
  },
  { flag: "empty_input", question: "topic", text: "" },
  { flag: "empty_input", question: "urgent", text: "  ?! " },
  { flag: "unsupported", question: "nope", text: CLEAR },
  {
    flag: "options_changed",
    question: "topic",
    text: CLEAR,
    options: ["billing", "spaceship"],
  },
  {
    flag: "options_changed",
    question: "topic",
    text: CLEAR,
    options: ["spaceship"],
  },
  {
    flag: "option_removed",
    question: "topic",
    text: CLEAR,
    options: ["shipping", "refund"],
  },
  { flag: "uncalibrated", question: "coin", text: CLEAR },
  { flag: "low_confidence", question: "topic", text: AMBIGUOUS },
  { flag: "drift", question: "topic", text: FOREIGN },
];

/** Cases for a bundle that serves new options, forces a threshold of 0 on `topic` and wants a radius of 1000 when exposed. */
const SETTINGS_CASES: FlagCase[] = [
  {
    flag: "new_options_served",
    question: "topic",
    text: CLEAR,
    options: ["billing", "spaceship"],
  },
  { flag: "manual_threshold", question: "topic", text: AMBIGUOUS },
  { flag: "low_radius", question: "topic", text: CLEAR, exposed: true },
  { flag: null, question: "topic", text: CLEAR, exposed: false },
];

function typeOf(question: string, noul: boolean): string {
  if (question === "topic" || question === "nope") return "choice";
  return noul ? "noul" : "predicate";
}

/** The flag and certified verdict of one case through one shape. */
async function through(
  s: RunningServer,
  shape: string,
  c: FlagCase,
): Promise<{ flag: unknown; certified: unknown }> {
  const exposed = c.exposed === undefined ? {} : { exposed: c.exposed };
  if (shape === "decide") {
    const q = c.options === undefined ? {} : { criteria: c.options };
    const { status, json } = await postJson(s.base, "/v1/decide", {
      state: c.text,
      questions: { [c.question]: q },
      ...exposed,
    });
    assert.equal(status, 200, JSON.stringify(json));
    const a = (json.answers as Record<string, Json>)[c.question]!;
    return { flag: a.flag, certified: a.certified };
  }
  if (shape === "decisions" || shape === "decisions/noul") {
    const choices = c.options?.map((value) => ({ value }));
    const question = {
      type: typeOf(c.question, shape.endsWith("noul")),
      name: c.question,
      instructions: "",
      ...(choices === undefined ? {} : { choices }),
    };
    const { status, json } = await postJson(s.base, "/v1/decisions", {
      model: "m",
      input: c.text,
      questions: [question],
      ...exposed,
    });
    assert.equal(status, 200, JSON.stringify(json));
    const service = ((json.answers as Json[])[0]!).service as Json;
    return { flag: service.flag, certified: service.certified };
  }
  const criteria = c.options === undefined
    ? undefined
    : Object.fromEntries(c.options.map((o) => [o, `about ${o}`]));
  const question = {
    type: typeOf(c.question, shape.endsWith("noul")),
    instructions: "",
    ...(criteria === undefined ? {} : { criteria }),
  };
  const { status, json } = await postJson(s.base, "/v1/altdecisions", {
    model: "m",
    state: c.text,
    questions: { [c.question]: question },
    ...exposed,
  });
  assert.equal(status, 200, JSON.stringify(json));
  const service = (json.answers as Record<string, Json>)[c.question]!
    .service as Json;
  return { flag: service.flag, certified: service.certified };
}

const SHAPES = [
  "decide",
  "decisions",
  "decisions/noul",
  "altdecisions",
  "altdecisions/noul",
];

async function checkCases(
  t: Deno.TestContext,
  s: RunningServer,
  cases: FlagCase[],
): Promise<void> {
  for (const c of cases) {
    const label =
      `${c.flag ?? "certified"}: ${c.question} ${JSON.stringify(c.text)}` +
      (c.options ? ` among ${c.options.join(", ")}` : "") +
      (c.exposed ? " (exposed)" : "");
    await t.step(label, async () => {
      for (const shape of SHAPES) {
        if (shape.endsWith("noul") && c.question === "topic") continue;
        const got = await through(s, shape, c);
        assert.deepEqual(
          got,
          { flag: c.flag, certified: c.flag === null },
          shape,
        );
      }
      const playable = c.options === undefined && c.exposed !== true &&
        c.question !== "nope";
      if (playable) {
        const { status, json } = await postJson(s.base, "/v1/playground", {
          question: c.question,
          text: c.text,
        });
        assert.equal(status, 200);
        assert.equal(json.flag, c.flag, "playground");
        assert.equal(json.certified, c.flag === null, "playground");
      }
    });
  }
}

Deno.test("every flag of a default bundle comes through every shape unchanged", async (t) => {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`);
  const s = await startServer({ bundle, args: ["--drift-delta", "1e-12"] });
  try {
    await checkCases(t, s, DEFAULT_CASES);
    await t.step("every deferral is counted under its flag", async () => {
      const stats = JSON.parse((await getText(s.base, "/v1/stats")).text);
      const reasons = stats.deferral_reasons as Record<string, number>;
      for (
        const flag of DEFAULT_CASES.map((c) => c.flag).filter((f) => f !== null)
      ) assert.ok(reasons[flag]! > 0, flag);
      const sum = Object.values(reasons).reduce((a, b) => a + b, 0);
      assert.equal(sum, stats.counts.deferred);
    });
  } finally {
    await s.stop();
  }
});

Deno.test("the bundle settings flags (new options served, forced threshold, low radius) come through every shape", async (t) => {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`, {
    serve_new_options: true,
    force_thresholds: { topic: 0 },
    min_radius: 1000,
  });
  const s = await startServer({ bundle, args: ["--drift-delta", "1e-12"] });
  try {
    await checkCases(t, s, SETTINGS_CASES);
  } finally {
    await s.stop();
  }
});

Deno.test("a drift alarm withholds certification, shows on stats and metrics, and clears after normal traffic", async (t) => {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`);
  const s = await startServer({
    bundle,
    args: ["--drift-window", "30", "--drift-delta", "0.01"],
  });
  const topicOf = async (text: string) => {
    const { json } = await postJson(s.base, "/v1/decide", {
      state: text,
      questions: { topic: {} },
    });
    return (json.answers as Record<string, Json>).topic!;
  };
  try {
    await t.step("quiet at first", async () => {
      assert.equal((await topicOf(CLEAR)).flag, null);
      const stats = JSON.parse((await getText(s.base, "/v1/stats")).text);
      assert.equal(stats.drift.topic.status, "quiet");
      assert.equal(stats.drift.topic.since, null);
      assert.ok(stats.drift.topic.alarm_level > 1);
    });
    await t.step("foreign traffic raises the alarm", async () => {
      let sent = 0;
      for (; sent < 500; sent++) {
        await topicOf(`${FOREIGN} ${sent}`);
        const stats = JSON.parse((await getText(s.base, "/v1/stats")).text);
        if (stats.drift.topic.status === "alarmed") break;
      }
      assert.ok(sent < 500, "no alarm after 500 foreign texts");
      const stats = JSON.parse((await getText(s.base, "/v1/stats")).text);
      assert.equal(stats.drift.topic.alarms, 1);
      assert.ok(Date.parse(stats.drift.topic.since) <= Date.now());
      assert.equal(typeof stats.drift.topic.alarmed_at, "number");
      const metrics = (await getText(s.base, "/metrics")).text;
      assert.match(metrics, /^dtable_drift_alarm\{question="topic"\} 1$/m);
    });
    await t.step(
      "a text certified before is now withheld in every shape",
      async () => {
        for (const shape of ["decide", "decisions", "altdecisions"]) {
          assert.deepEqual(
            await through(s, shape, {
              flag: "drift",
              question: "topic",
              text: CLEAR,
            }),
            {
              flag: "drift",
              certified: false,
            },
          );
        }
        const play = await postJson(s.base, "/v1/playground", {
          question: "topic",
          text: CLEAR,
        });
        assert.equal(play.json.flag, "drift");
      },
    );
    await t.step("the playground neither raises nor clears it", async () => {
      const before =
        JSON.parse((await getText(s.base, "/v1/stats")).text).drift.topic
          .observed;
      for (let i = 0; i < 40; i++) {
        await postJson(s.base, "/v1/playground", {
          question: "topic",
          text: CLEAR,
        });
      }
      const after =
        JSON.parse((await getText(s.base, "/v1/stats")).text).drift.topic;
      assert.equal(after.observed, before);
      assert.equal(after.status, "alarmed");
    });
    await t.step("normal traffic clears it", async () => {
      const normal = [
        "my invoice was overcharged",
        "where is my parcel delivery",
        "i need a refund of my money",
        "my login password is locked",
      ];
      let cleared = false;
      for (let i = 0; i < 600 && !cleared; i++) {
        await topicOf(normal[i % normal.length]!);
        if (i % 10 === 9) {
          cleared =
            JSON.parse((await getText(s.base, "/v1/stats")).text).drift.topic
              .status === "quiet";
        }
      }
      assert.ok(cleared, "the alarm did not clear after 600 normal texts");
      const stats = JSON.parse((await getText(s.base, "/v1/stats")).text);
      assert.equal(stats.drift.topic.clears, 1);
      assert.equal(stats.drift.topic.since, null);
      assert.equal((await topicOf(CLEAR)).flag, null);
    });
  } finally {
    await s.stop();
  }
});
