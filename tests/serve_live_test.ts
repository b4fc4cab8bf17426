/**
 * The live certificate's edges in a real `main.ts serve`: the feedback log
 * (trace lines `train --traces` reads, under the locked-down permissions
 * plus `--allow-write` on the log), and reloading the bundle on SIGHUP and
 * with `--watch` (a broken bundle refused, the old one still serving).
 */

import assert from "node:assert/strict";
import { writeBundleAtomically } from "../src/bundle/files.ts";
import { parseJsonlTraces } from "../src/traces/parse.ts";
import { bundleFiles, runCli, smallTable, tempDir } from "./_fixtures.ts";
import {
  eventually,
  postJson,
  replaceUntilReloaded,
  type RunningServer,
  startServer,
  startWatching,
  writeTestBundle,
} from "./_http_helpers.ts";

const CLEAR = "my invoice was overcharged";

async function audited(s: RunningServer): Promise<number> {
  const stats = await (await fetch(`${s.base}/v1/stats`)).json();
  return stats.live.questions.topic.audited;
}

Deno.test("serve --feedback-log appends every feedback item as a trace line train reads", async () => {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`);
  const log = `${dir.path}/feedback.jsonl`;
  const s = await startServer({
    bundle,
    args: ["--audit-rate", "1", "--audit-seed", "5", "--feedback-log", log],
    write: [log],
  });
  try {
    const { json } = await postJson(s.base, "/v1/decide", { state: CLEAR });
    const answers = json.answers as Record<string, Record<string, unknown>>;
    const id = answers.topic!.audit as string;
    const reply = await postJson(s.base, "/v1/feedback", [
      { question: "topic", state: CLEAR, answer: "billing", audit: id },
      { question: "urgent", state: { body: "send it now" }, answer: true },
    ]);
    assert.equal(reply.status, 200);
    assert.equal(reply.json.audits, 1);
    const bad = await postJson(s.base, "/v1/feedback", { question: "topic" });
    assert.equal(bad.status, 400);
  } finally {
    const end = await s.stop();
    assert.equal(end.code, 0, end.stderr);
  }
  const text = await Deno.readTextFile(log);
  const all = text.trimEnd().split("\n").map((l) => JSON.parse(l));
  // Beside the feedback, the decision ledger (at audit rate 1 every
  // decision is picked, and its text kept).
  const lines = all.filter((l) => "text" in l);
  assert.ok(all.some((l) => "ledger" in l), "the ledger is written");
  assert.ok(all.some((l) => "pick" in l), "the picks are written");
  assert.equal(lines.length, 2, "the refused body is not logged");
  assert.deepEqual(lines[0].answers, { topic: "billing" });
  assert.equal(lines[0].text, CLEAR);
  assert.equal(lines[1].text, '{"body":"send it now"}');
  assert.ok(!Number.isNaN(Date.parse(lines[0].time)));
  const set = parseJsonlTraces(log, text);
  assert.equal(set.texts.length - (set.picks?.length ?? 0), 2);
  assert.deepEqual(set.questions.map((q) => q.name).sort(), [
    "topic",
    "urgent",
  ]);
  assert.ok(set.times !== null && set.times[0]! > 0);
});

Deno.test("serve reloads its bundle on SIGHUP, refuses a broken one and keeps serving", async () => {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`);
  const s = await startServer({
    bundle,
    args: ["--audit-rate", "1", "--audit-seed", "5"],
  });
  try {
    const { json } = await postJson(s.base, "/v1/decide", { state: CLEAR });
    const id = (json.answers as Record<string, Record<string, string>>).topic!
      .audit;
    await postJson(s.base, "/v1/feedback", {
      question: "topic",
      state: CLEAR,
      answer: "billing",
      audit: id,
    });
    assert.equal(await audited(s), 1);

    // A broken bundle: refused in one line, the old table still answers.
    await Deno.writeTextFile(`${bundle}/manifest.json`, "{ not json");
    Deno.kill(s.pid, "SIGHUP");
    await eventually(
      () => /reload of bundle .* refused/.test(s.output().stderr),
      () => `the refusal: ${s.output().stderr}`,
    );
    const refused = s.output().stderr.split("\n").filter((l) =>
      l.includes("refused")
    );
    assert.equal(refused.length, 1, s.output().stderr);
    assert.equal(await audited(s), 1, "the old table and its evidence stay");
    const still = await postJson(s.base, "/v1/decide", { state: CLEAR });
    assert.equal(still.status, 200);

    // A good bundle: swapped in, its live certificate starts afresh.
    await writeBundleAtomically(bundle, await bundleFiles(smallTable()));
    Deno.kill(s.pid, "SIGHUP");
    await eventually(
      () => /reloaded bundle/.test(s.output().stderr),
      () => `the reload: ${s.output().stderr}`,
    );
    assert.equal(await audited(s), 0);
    const after = await postJson(s.base, "/v1/decide", { state: CLEAR });
    assert.equal(after.status, 200);
  } finally {
    const end = await s.stop();
    assert.equal(end.code, 0, end.stderr);
  }
});

Deno.test("serve --watch reloads when the bundle folder is replaced", async () => {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`);
  const s = await startWatching(bundle, dir.path);
  try {
    // The watch may take a moment to be in place: replace until seen.
    const files = await bundleFiles(smallTable());
    await replaceUntilReloaded(s, () => writeBundleAtomically(bundle, files));
    assert.match(s.output().stderr, /reloaded bundle/);
    const after = await postJson(s.base, "/v1/decide", { state: CLEAR });
    assert.equal(after.status, 200);
  } finally {
    const end = await s.stop();
    assert.equal(end.code, 0, end.stderr);
  }
});

Deno.test("inspect --server shows a running server's live certificate in words", async () => {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`);
  const s = await startServer({
    bundle,
    args: ["--audit-rate", "1", "--audit-seed", "5"],
  });
  try {
    const { json } = await postJson(s.base, "/v1/decide", { state: CLEAR });
    const id = (json.answers as Record<string, Record<string, string>>).topic!
      .audit;
    await postJson(s.base, "/v1/feedback", {
      question: "topic",
      state: CLEAR,
      answer: "shipping",
      audit: id,
    });
    const run = await runCli(["inspect", "--server", s.base]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stdout,
      /^- topic: threshold 0\.\d{3} \(bundle's\), 1 audit, 1 disagreed, live rate/m,
    );
    const asJson = await runCli(["inspect", "--server", s.base, "--json"]);
    assert.equal(JSON.parse(asJson.stdout).questions.topic.audited, 1);
  } finally {
    await s.stop();
  }
  const down = await runCli(["inspect", "--server", s.base]);
  assert.equal(down.code, 2);
  assert.match(
    down.stderr,
    /^error: Cannot reach http:\/\/127\.0\.0\.1:\d+\/v1\/stats: /,
  );
});

Deno.test("inspect --server --token-file sends the token the file holds", async () => {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`);
  const token = `tok-${crypto.randomUUID()}`;
  const s = await startServer({ bundle, env: { SERVICE_PROXY_TOKEN: token } });
  /** `inspect --server` given `--token-file` the folder's file `name`. */
  const inspectWith = (name: string) =>
    runCli([
      "inspect",
      "--server",
      s.base,
      "--token-file",
      `${dir.path}/${name}`,
    ]);
  try {
    const without = await runCli(["inspect", "--server", s.base]);
    assert.equal(without.code, 2);
    assert.match(
      without.stderr,
      /answered 401 \(give the access token with --token-file/,
    );
    await Deno.writeTextFile(`${dir.path}/token`, `${token}\n`);
    const run = await inspectWith("token");
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^server http:.*audits /m);
    await Deno.writeTextFile(`${dir.path}/empty`, "\n");
    const empty = await inspectWith("empty");
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /^error: token file .*empty is empty$/m);
    const missing = await inspectWith("nope");
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^error: Cannot read token file .*nope: /m);
  } finally {
    await s.stop();
  }
});
