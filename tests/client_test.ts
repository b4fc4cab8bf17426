/**
 * The proxy-side client (`src/client/mod.ts`) against a real server: the
 * table's certified answers served, the model asked for uncertified and
 * audited ones, feedback reported; and the same module from Node.
 */

import assert from "node:assert/strict";
import { DecisionClient, type ModelAsk } from "../src/client/mod.ts";
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
): Promise<void> {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`);
  const s = await startServer({ bundle, args });
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

Deno.test("the client reports a service error with its status and message", async () => {
  await withServer([], async (s) => {
    const client = new DecisionClient({ url: s.base, model: () => true });
    await assert.rejects(
      client.decide(CLEAR, { topic: { criteria: [3 as unknown as string] } }),
      /^Error: \/v1\/decide answered 400: /,
    );
  });
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
