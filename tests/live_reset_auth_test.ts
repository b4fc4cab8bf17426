/**
 * Who may reset the live evidence, over real server processes: a reset
 * undoes what feedback did, so `POST /v1/live/reset` takes the credential
 * that posts feedback. With `--feedback-token-file` that is the feedback
 * token and never the access token (the issue's attack: a liar's withdrawal
 * undone by a decision client's credential); without one, the access token
 * when one is set; without any token, nothing (the loopback default).
 * `inspect --server URL --live-reset` follows with `--feedback-token-file`.
 */

import assert from "node:assert/strict";
import { runCli, tempDir } from "./_fixtures.ts";
import {
  postJson,
  type RunningServer,
  startServer,
  writeTestBundle,
} from "./_http_helpers.ts";
import type { Json } from "./_fleet.ts";

const ACCESS = "access-token-of-decision-clients";
const FEEDBACK = "feedback-token-of-the-proxy";

interface Setup {
  bundle: string;
  access: string;
  feedback: string;
}

async function setup(dir: string): Promise<Setup> {
  const bundle = await writeTestBundle(`${dir}/bundle`);
  const access = `${dir}/access.token`;
  const feedback = `${dir}/feedback.token`;
  await Deno.writeTextFile(access, ACCESS + "\n");
  await Deno.writeTextFile(feedback, FEEDBACK + "\n");
  return { bundle, access, feedback };
}

/** A server auditing half the certified answers, with the token files asked for. */
function serve(
  s: Setup,
  tokens: { access?: boolean; feedback?: boolean },
): Promise<RunningServer> {
  // The drift guard quiet: the same few texts again and again.
  const args = [
    "--audit-rate",
    "0.5",
    "--audit-seed",
    "3",
    "--drift-delta",
    "1e-12",
    "--drift-single-p",
    "0",
    "--drift-max-novelty",
    "1",
  ];
  if (tokens.access) args.push("--token-file", s.access);
  if (tokens.feedback) args.push("--feedback-token-file", s.feedback);
  return startServer({
    bundle: s.bundle,
    args,
    read: [s.access, s.feedback],
  });
}

const bearer = (token: string | null): Record<string, string> =>
  token === null ? {} : { authorization: `Bearer ${token}` };

async function topic(s: RunningServer, token: string | null): Promise<Json> {
  const res = await fetch(`${s.base}/v1/stats`, { headers: bearer(token) });
  assert.equal(res.status, 200);
  return (await res.json()).live.questions.topic;
}

/**
 * Lies on audits (a wrong option on every one, posted with
 * `feedbackToken`) until the threshold is no longer the bundle's; returns
 * how many.
 */
async function lie(
  s: RunningServer,
  accessToken: string | null,
  feedbackToken: string | null,
): Promise<number> {
  const texts = [
    "my invoice was overcharged",
    "the parcel never arrived",
    "refund the double charge on my bill",
    "where is my package",
  ];
  let lies = 0;
  for (let i = 0; i < 400; i++) {
    const state = texts[i % texts.length]!;
    const { status, json } = await postJson(s.base, "/v1/decide", {
      state,
      questions: { topic: {} },
    }, bearer(accessToken));
    assert.equal(status, 200);
    const a = (json.answers as Json).topic;
    if (a.audit === undefined) continue;
    const wrong = a.choice === "billing" ? "shipping" : "billing";
    const { status: fs } = await postJson(s.base, "/v1/feedback", {
      question: "topic",
      state,
      answer: wrong,
      audit: a.audit,
    }, bearer(feedbackToken));
    assert.equal(fs, 200);
    lies++;
    if ((await topic(s, accessToken)).reason !== "bundle") return lies;
  }
  throw new Error("the lies never moved the threshold");
}

async function reset(
  s: RunningServer,
  token: string | null,
): Promise<{ status: number; json: Json }> {
  const { status, json } = await postJson(
    s.base,
    "/v1/live/reset",
    { question: "topic" },
    bearer(token),
  );
  return { status, json };
}

Deno.test("with an access token and a feedback token, the access token never resets the live evidence (401); the feedback token does, and inspect --live-reset sends it", async () => {
  await using dir = await tempDir();
  const s = await setup(dir.path);
  const server = await serve(s, { access: true, feedback: true });
  try {
    const lies = await lie(server, ACCESS, FEEDBACK);
    const moved = await topic(server, ACCESS);
    assert.notEqual(moved.reason, "bundle");
    // The attack: a decision client's credential undoes what feedback did.
    for (const token of [ACCESS, null, "a guess"]) {
      const r = await reset(server, token);
      assert.equal(r.status, 401, JSON.stringify(r.json));
      assert.match(String(r.json.error), /feedback token/);
    }
    // Also as the password of a Basic login and as X-Service-Token.
    for (
      const headers of [
        { "x-service-token": ACCESS },
        { authorization: `Basic ${btoa(`ops:${ACCESS}`)}` },
      ]
    ) {
      const { status } = await postJson(
        server.base,
        "/v1/live/reset",
        {},
        headers,
      );
      assert.equal(status, 401);
    }
    const kept = await topic(server, ACCESS);
    assert.equal(kept.reason, moved.reason);
    assert.equal(kept.audited, moved.audited);
    assert.equal((await statsResets(server)).total, 0);
    // inspect with the access token alone is refused, and says what to give.
    const refused = await runCli([
      "inspect",
      "--server",
      server.base,
      "--live-reset",
      "--token-file",
      s.access,
    ]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /answered 401.*--feedback-token-file/);
    assert.equal((await topic(server, ACCESS)).reason, moved.reason);
    // With the feedback token it resets, and shows the result with the
    // access token.
    const done = await runCli([
      "inspect",
      "--server",
      server.base,
      "--live-reset",
      "--question",
      "topic",
      "--token-file",
      s.access,
      "--feedback-token-file",
      s.feedback,
    ]);
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stdout, /reset the live evidence of "topic"/);
    assert.match(done.stdout, /topic: threshold [\d.]+ \(bundle's\)/);
    const after = await topic(server, ACCESS);
    assert.equal(after.reason, "bundle");
    assert.equal(after.audited, 0);
    // The feedback token over HTTP, too.
    await lie(server, ACCESS, FEEDBACK);
    const r = await reset(server, FEEDBACK);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.deepEqual(r.json.reset, ["topic"]);
    assert.equal((await topic(server, ACCESS)).reason, "bundle");
    console.log(
      `reset: ${lies} lies moved the threshold to ${moved.threshold} (${moved.reason}); the access token was refused, the feedback token reset it`,
    );
  } finally {
    await server.stop();
  }
});

async function statsResets(server: RunningServer): Promise<Json> {
  const res = await fetch(`${server.base}/v1/stats`, {
    headers: bearer(ACCESS),
  });
  return (await res.json()).live.resets;
}

Deno.test("with only a feedback token, a reset needs it and the other routes stay open", async () => {
  await using dir = await tempDir();
  const s = await setup(dir.path);
  const server = await serve(s, { feedback: true });
  try {
    await lie(server, null, FEEDBACK);
    assert.equal((await reset(server, null)).status, 401);
    assert.equal((await reset(server, ACCESS)).status, 401);
    assert.notEqual((await topic(server, null)).reason, "bundle");
    // inspect reads the statistics without a token and resets with the
    // feedback token.
    const done = await runCli([
      "inspect",
      "--server",
      server.base,
      "--live-reset",
      "--feedback-token-file",
      s.feedback,
    ]);
    assert.equal(done.code, 0, done.stderr);
    assert.equal((await topic(server, null)).reason, "bundle");
  } finally {
    await server.stop();
  }
});

Deno.test("without a feedback token the access token is what posts feedback, so it resets; without any token, anyone who reaches the port does", async (t) => {
  await using dir = await tempDir();
  const s = await setup(dir.path);
  await t.step("access token only", async () => {
    const server = await serve(s, { access: true });
    try {
      await lie(server, ACCESS, ACCESS);
      assert.equal((await reset(server, null)).status, 401);
      assert.equal((await reset(server, FEEDBACK)).status, 401);
      assert.notEqual((await topic(server, ACCESS)).reason, "bundle");
      const done = await runCli([
        "inspect",
        "--server",
        server.base,
        "--live-reset",
        "--token-file",
        s.access,
      ]);
      assert.equal(done.code, 0, done.stderr);
      assert.equal((await topic(server, ACCESS)).reason, "bundle");
    } finally {
      await server.stop();
    }
  });
  await t.step("no token", async () => {
    const server = await serve(s, {});
    try {
      await lie(server, null, null);
      const r = await reset(server, null);
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.equal((await topic(server, null)).reason, "bundle");
    } finally {
      await server.stop();
    }
  });
});
