/**
 * Who may post feedback: with a feedback token (`serve
 * --feedback-token-file`), `/v1/feedback` needs it and only it, and it
 * opens no other route; tokens are printable ASCII or refused at start.
 */

import assert from "node:assert/strict";
import { createApp } from "../src/http/app.ts";
import { fileToken, fixedToken, tokenProblem } from "../src/http/token.ts";
import { DecisionClient } from "../src/client/mod.ts";
import { DriftMonitor } from "../src/engine/mod.ts";
import { smallTable, tempDir } from "./_fixtures.ts";
import { runServe, startServer, writeTestBundle } from "./_http_helpers.ts";

const table = smallTable().table;

function app(extra: Partial<Parameters<typeof createApp>[0]> = {}) {
  return createApp({
    table,
    bundlePath: "test/bundle",
    monitor: new DriftMonitor({ ...table.settings.drift, delta: 1e-12 }),
    live: { auditRate: 0.5, auditSeed: 1 },
    ...extra,
  });
}

const FEEDBACK = { question: "topic", state: "my invoice", answer: "billing" };

async function status(
  a: ReturnType<typeof createApp>,
  method: "GET" | "POST",
  path: string,
  headers: Record<string, string>,
): Promise<[number, string]> {
  const res = await a.request(path, {
    method,
    headers,
    ...(method === "POST"
      ? {
        body: JSON.stringify(
          path === "/v1/feedback" ? FEEDBACK : { state: "my invoice" },
        ),
      }
      : {}),
  });
  const text = await res.text();
  return [res.status, text];
}

Deno.test("with a feedback token, /v1/feedback needs it and the access token does not post feedback", async (t) => {
  const a = app({
    token: fixedToken("service-token", "test"),
    feedbackToken: fixedToken("feedback-token", "test"),
  });
  const cases: [
    string,
    "GET" | "POST",
    string,
    Record<string, string>,
    number,
  ][] = [
    ["feedback with the feedback token", "POST", "/v1/feedback", {
      "x-service-token": "feedback-token",
    }, 200],
    ["feedback with the feedback token as Bearer", "POST", "/v1/feedback", {
      authorization: "Bearer feedback-token",
    }, 200],
    ["feedback with the access token", "POST", "/v1/feedback", {
      "x-service-token": "service-token",
    }, 401],
    ["feedback with no token", "POST", "/v1/feedback", {}, 401],
    ["a decision with the access token", "POST", "/v1/decide", {
      "x-service-token": "service-token",
    }, 200],
    ["a decision with the feedback token", "POST", "/v1/decide", {
      "x-service-token": "feedback-token",
    }, 401],
    ["statistics with the feedback token", "GET", "/v1/stats", {
      "x-service-token": "feedback-token",
    }, 401],
    ["health with nothing", "GET", "/v1/health", {}, 200],
  ];
  for (const [name, method, path, headers, expected] of cases) {
    await t.step(name, async () => {
      const [code, body] = await status(a, method, path, headers);
      assert.equal(code, expected, body);
      if (code === 401 && path === "/v1/feedback") {
        assert.match(body, /feedback token/);
      }
    });
  }
});

Deno.test("a feedback token without an access token closes /v1/feedback and leaves the other routes open", async () => {
  const a = app({ feedbackToken: fixedToken("feedback-token", "test") });
  assert.equal((await status(a, "POST", "/v1/feedback", {}))[0], 401);
  assert.equal(
    (await status(a, "POST", "/v1/feedback", {
      "x-service-token": "feedback-token",
    }))[0],
    200,
  );
  assert.equal((await status(a, "POST", "/v1/decide", {}))[0], 200);
  assert.equal((await status(a, "GET", "/v1/stats", {}))[0], 200);
});

Deno.test("the feedback token file is read on every request and fails closed when emptied", async () => {
  await using dir = await tempDir();
  const file = `${dir.path}/feedback-token`;
  await Deno.writeTextFile(file, "one\n");
  const warnings: string[] = [];
  const a = app({
    feedbackToken: fileToken(file, { warn: (m) => warnings.push(m) }),
  });
  const post = async (token: string) =>
    (await status(a, "POST", "/v1/feedback", { "x-service-token": token }))[0];
  assert.equal(await post("one"), 200);
  await Deno.writeTextFile(file, "two");
  assert.equal(await post("one"), 401);
  assert.equal(await post("two"), 200);
  await Deno.writeTextFile(file, "");
  assert.equal(await post("two"), 401);
  assert.equal(await post(""), 401);
  await Deno.writeTextFile(file, "three");
  assert.equal(await post("three"), 200);
  await Deno.writeTextFile(file, "tr\u00e9s");
  assert.equal(await post("tr\u00e9s"), 401);
  assert.equal(warnings.length, 2, warnings.join("\n"));
  assert.match(warnings[1]!, /not printable ASCII/);
});

Deno.test("tokenProblem() takes printable ASCII and names the first other character", () => {
  assert.equal(tokenProblem("A-z_0.9 ~!"), null);
  assert.match(tokenProblem("abc\u00e9")!, /^character 4 \("é", U\+00E9\)/);
  assert.match(tokenProblem("a\u{1F511}")!, /U\+1F511/);
  assert.match(tokenProblem("a\tb")!, /U\+0009/);
});

Deno.test("DecisionClient sends feedback with its feedback token and decisions with its access token", async () => {
  const seen: [string, string | null][] = [];
  const fake: typeof fetch = (input, init) => {
    const url = String(input);
    const headers = new Headers(init?.headers);
    seen.push([new URL(url).pathname, headers.get("x-service-token")]);
    const body = url.endsWith("/v1/decide")
      ? {
        answers: {
          topic: {
            choice: "billing",
            certified: true,
            flag: null,
            audit: "id-1",
          },
        },
      }
      : {
        received: 1,
        audits: 1,
        feedback: 0,
        traces_only: 0,
        missed_audits: [],
        refused: [],
      };
    return Promise.resolve(new Response(JSON.stringify(body)));
  };
  const client = new DecisionClient({
    url: "http://127.0.0.1:1",
    token: "service-token",
    feedbackToken: "feedback-token",
    model: () => "billing",
    fetch: fake,
  });
  await client.decide("my invoice", { topic: {} });
  assert.deepEqual(seen, [
    ["/v1/decide", "service-token"],
    ["/v1/feedback", "feedback-token"],
  ]);
});

Deno.test("serve refuses a token that is not printable ASCII at start, with one line naming the character", async (t) => {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`);
  const file = `${dir.path}/token`;
  await Deno.writeTextFile(file, "s3cr\u00e9t\n");
  const cases: [string, string[], Record<string, string>][] = [
    ["--token-file", ["--token-file", file], {}],
    ["--feedback-token-file", ["--feedback-token-file", file], {}],
    ["the environment variable", [], { SERVICE_PROXY_TOKEN: "s3cr\u00e9t" }],
  ];
  for (const [name, args, env] of cases) {
    await t.step(name, async () => {
      const end = await runServe(["--bundle", bundle, "--port", "0", ...args], [
        "--allow-net=127.0.0.1",
        `--allow-read=${bundle},${file}`,
        "--allow-env=SERVICE_PROXY_TOKEN",
      ], env);
      assert.equal(end.code, 2, end.stderr);
      const lines = end.stderr.trim().split("\n");
      assert.equal(lines.length, 1, end.stderr);
      assert.match(
        lines[0]!,
        /character 5 \("é", U\+00E9\) is not printable ASCII/,
      );
    });
  }
  await t.step(
    "the feedback token file must not be the token file",
    async () => {
      const end = await runServe([
        "--bundle",
        bundle,
        "--token-file",
        file,
        "--feedback-token-file",
        file,
      ]);
      assert.equal(end.code, 2);
      assert.match(end.stderr, /must not be the --token-file/);
    },
  );
});

Deno.test("serve --feedback-token-file: over the wire, feedback takes the feedback token (X-Service-Token or Bearer) and not the access token", async () => {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`);
  const file = `${dir.path}/feedback-token`;
  await Deno.writeTextFile(file, "feedback-secret\n");
  const s = await startServer({
    bundle,
    args: ["--feedback-token-file", file],
    env: { SERVICE_PROXY_TOKEN: "service-secret" },
    read: [file],
  });
  try {
    assert.match(s.output().stdout, /feedback token: set, from file/);
    const post = async (headers: Record<string, string>) => {
      const res = await fetch(`${s.base}/v1/feedback`, {
        method: "POST",
        headers,
        body: JSON.stringify(FEEDBACK),
      });
      await res.body?.cancel();
      return res.status;
    };
    assert.equal(await post({ "x-service-token": "feedback-secret" }), 200);
    assert.equal(await post({ authorization: "Bearer feedback-secret" }), 200);
    assert.equal(await post({ "x-service-token": "service-secret" }), 401);
    assert.equal(await post({}), 401);
  } finally {
    await s.stop();
  }
});
