/**
 * The proxy-side client (`src/client/mod.ts`) against a real server: the
 * table's certified answers served, the model asked for uncertified and
 * audited ones, feedback reported; and the same module from Node.
 */

import assert from "node:assert/strict";
import {
  DecisionClient,
  DecisionServiceError,
  FeedbackError,
  type ModelAsk,
} from "../src/client/mod.ts";
import { tempDir } from "./_fixtures.ts";
import { missingTool } from "./_tools.ts";
import {
  type RunningServer,
  startServer,
  writeTestBundle,
} from "./_http_helpers.ts";

const CLEAR = "my invoice was overcharged";

async function withServer(
  args: string[],
  body: (s: RunningServer, dir: string) => Promise<void>,
  env: Record<string, string> = {},
): Promise<void> {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`);
  const s = await startServer({ bundle, args, env });
  try {
    await body(s, dir.path);
  } finally {
    await s.stop();
  }
}

function model(asked: ModelAsk[]) {
  return (ask: ModelAsk) => {
    asked.push(ask);
    return ask.question === "topic" ? "billing" : false;
  };
}

Deno.test("the client serves certified answers and asks the model for the rest", async () => {
  await withServer(["--audit-rate", "0"], async (s) => {
    const asked: ModelAsk[] = [];
    const client = new DecisionClient({ url: s.base, model: model(asked) });
    const answers = await client.decide(CLEAR, {
      topic: null,
      coin: null,
      nope: null,
    });
    assert.deepEqual(Object.keys(answers), ["topic", "coin", "nope"]);
    assert.deepEqual(answers.topic, {
      answer: "billing",
      source: "table",
      certified: true,
      audited: false,
      flag: null,
      table: "billing",
    });
    // One answer per named question, typed so (no `!` needed).
    assert.equal(answers.coin.source, "model");
    assert.equal(answers.coin.flag, "uncalibrated");
    assert.equal(answers.nope.source, "model");
    assert.deepEqual(asked.map((a) => [a.question, a.reason]).sort(), [
      ["coin", "uncertified"],
      ["nope", "uncertified"],
    ]);
  });
});

Deno.test("the client answers audits with the model and reports them", async () => {
  await withServer(["--audit-rate", "1", "--audit-seed", "3"], async (s) => {
    const asked: ModelAsk[] = [];
    const errors: Error[] = [];
    const client = new DecisionClient({
      url: s.base,
      model: model(asked),
      onFeedbackError: (e) => errors.push(e),
    });
    const answers = await client.decide(CLEAR, {
      topic: { criteria: ["billing", "shipping"] },
    });
    assert.equal(answers.topic!.source, "model");
    assert.equal(answers.topic!.audited, true);
    assert.equal(answers.topic!.certified, true);
    assert.deepEqual(asked[0]!.criteria, ["billing", "shipping"]);
    assert.deepEqual(errors, []);
    const stats = await (await fetch(`${s.base}/v1/stats`)).json();
    assert.equal(stats.live.questions.topic.audited, 1);
    assert.equal(stats.live.questions.topic.audit_disagreements, 0);
  });
});

Deno.test("every refused or failed feedback item reaches onFeedbackError with its reason, and the counts say how many", async () => {
  await withServer(["--audit-rate", "1", "--audit-seed", "3"], async (s) => {
    const errors: FeedbackError[] = [];
    // The model's labels end in a carriage return (read from a CRLF file).
    const client = new DecisionClient({
      url: s.base,
      model: (ask) => ask.question === "topic" ? "billing\r" : false,
      onFeedbackError: (e) => errors.push(e),
    });
    for (let i = 0; i < 3; i++) {
      await client.decide(CLEAR, { topic: null, urgent: null });
    }
    const topic = errors.filter((e) => e.item.question === "topic");
    assert.equal(topic.length, 3, errors.map((e) => e.message).join("\n"));
    for (const e of topic) {
      assert.equal(e.kind, "refused");
      assert.equal(e.reason, "unknown_option");
      assert.match(
        e.message,
        /"billing\\r" is not an option of the bundle; it ends in a carriage return; did you mean "billing"\?/,
      );
    }
    const counts = client.feedbackCounts;
    assert.equal(counts.refused, 3);
    assert.equal(counts.sent, counts.accepted + counts.refused);
    assert.equal(counts.failed, 0);
    const stats = await (await fetch(`${s.base}/v1/stats`)).json();
    assert.equal(stats.counts.feedback_refused, 3);
  });
  // A feedback request that fails loses each of its items, each told.
  const errors: FeedbackError[] = [];
  let calls = 0;
  const client = new DecisionClient({
    url: "http://127.0.0.1:1",
    model: () => "billing",
    onFeedbackError: (e) => errors.push(e),
    fetch: (_url, init) => {
      calls++;
      const path = String(_url);
      if (path.endsWith("/v1/feedback")) {
        return Promise.resolve(
          new Response(JSON.stringify({ error: "draining" }), {
            status: 503,
          }),
        );
      }
      assert.ok(init !== undefined);
      return Promise.resolve(
        new Response(
          JSON.stringify({
            answers: {
              topic: {
                choice: "billing",
                certified: false,
                flag: "low_confidence",
              },
              urgent: {
                answer: false,
                certified: false,
                flag: "low_confidence",
              },
            },
          }),
        ),
      );
    },
  });
  await client.decide(CLEAR);
  assert.equal(calls, 2);
  assert.deepEqual(errors.map((e) => [e.kind, e.item.question]), [
    ["failed", "topic"],
    ["failed", "urgent"],
  ]);
  assert.match(errors[0]!.reason, /answered 503: draining/);
  assert.deepEqual(client.feedbackCounts, {
    sent: 2,
    accepted: 0,
    refused: 0,
    missedAudits: 0,
    failed: 2,
  });
});

/** What `promise` rejected with, checked to be a `DecisionServiceError`. */
async function serviceError(
  promise: Promise<unknown>,
): Promise<DecisionServiceError> {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof DecisionServiceError, String(e));
    return e;
  }
  assert.fail("expected a DecisionServiceError");
}

Deno.test("the client throws DecisionServiceError with the status and the parsed reply", async (t) => {
  await t.step("400: a body the service cannot read", async () => {
    await withServer([], async (s) => {
      const client = new DecisionClient({ url: s.base, model: () => true });
      const e = await serviceError(
        client.decide(CLEAR, { topic: { criteria: [3 as unknown as string] } }),
      );
      assert.equal(e.name, "DecisionServiceError");
      assert.equal(e.path, "/v1/decide");
      assert.equal(e.status, 400);
      const reply = e.reply as { error: string };
      assert.equal(typeof reply.error, "string");
      assert.equal(e.message, `/v1/decide answered 400: ${reply.error}`);
    });
  });
  await t.step("401: no token for a service that needs one", async () => {
    await withServer([], async (s) => {
      const client = new DecisionClient({ url: s.base, model: () => true });
      const e = await serviceError(client.decide(CLEAR));
      assert.equal(e.status, 401);
      assert.match((e.reply as { error: string }).error, /token/i);
    }, { SERVICE_PROXY_TOKEN: "a-long-enough-proxy-token-0123456789" });
  });
  await t.step(
    "503 with a reply that is not JSON: the text is the reply",
    async () => {
      const client = new DecisionClient({
        url: "http://127.0.0.1:1",
        model: () => true,
        fetch: () => Promise.resolve(new Response("draining", { status: 503 })),
      });
      const e = await serviceError(client.decide(CLEAR));
      assert.equal(e.status, 503);
      assert.equal(e.reply, "draining");
      assert.equal(e.message, "/v1/decide answered 503: draining");
    },
  );
  await t.step(
    "feedback refused: onFeedbackError gets the item's FeedbackError, its cause the typed error, the answers come back",
    async () => {
      const errors: Error[] = [];
      const client = new DecisionClient({
        url: "http://127.0.0.1:1",
        model: () => "billing",
        onFeedbackError: (e) => errors.push(e),
        fetch: (input) =>
          Promise.resolve(
            String(input).endsWith("/v1/decide")
              ? Response.json({
                answers: {
                  topic: { choice: "billing", certified: false, flag: "drift" },
                },
              })
              : Response.json({ error: "busy" }, { status: 503 }),
          ),
      });
      const answers = await client.decide(CLEAR, { topic: null });
      assert.equal(answers.topic.source, "model");
      assert.equal(errors.length, 1);
      assert.ok(errors[0] instanceof FeedbackError);
      assert.equal(errors[0].kind, "failed");
      const e = errors[0].cause;
      assert.ok(e instanceof DecisionServiceError);
      assert.equal(e.path, "/v1/feedback");
      assert.equal(e.status, 503);
      assert.deepEqual(e.reply, { error: "busy" });
    },
  );
});

const noNode = missingTool("client_test", "node", "apt-get install nodejs");

Deno.test({
  name: "the client runs in Node (fetch only, no Deno APIs)",
  ignore: noNode !== null,
}, async () => {
  await withServer(["--audit-rate", "0"], async (s, dir) => {
    const bundled = `${dir}/client.mjs`;
    const made = await new Deno.Command(Deno.execPath(), {
      args: [
        "bundle",
        "--quiet",
        new URL("../src/client/mod.ts", import.meta.url).pathname,
        "-o",
        bundled,
      ],
      stderr: "piped",
    }).output();
    assert.equal(made.code, 0, new TextDecoder().decode(made.stderr));
    const script = `${dir}/proxy.mjs`;
    await Deno.writeTextFile(
      script,
      `import { DecisionClient } from "./client.mjs";
const client = new DecisionClient({ url: process.argv[2], model: () => false });
const answers = await client.decide(${
        JSON.stringify(CLEAR)
      }, { topic: null, coin: null });
console.log(JSON.stringify(answers));
`,
    );
    const run = await new Deno.Command("node", {
      args: [script, s.base],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const out = new TextDecoder().decode(run.stdout);
    assert.equal(run.code, 0, new TextDecoder().decode(run.stderr));
    const answers = JSON.parse(out);
    assert.equal(answers.topic.source, "table");
    assert.equal(answers.coin.source, "model");
    assert.equal(answers.coin.answer, false);
  });
});
