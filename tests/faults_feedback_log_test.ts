/**
 * The feedback log under crashes and abuse: a torn last line is cut off
 * when the log is opened (never glued to), trace reading skips a torn last
 * line with a warning naming file and line (a torn line elsewhere stays an
 * error), the log rotates at `--feedback-log-max-mb` into a file `train`
 * reads, only valid traces are written, and a real server killed with
 * SIGKILL while writing large items, six times over one log, leaves a log
 * that reads whole. Whether a SIGKILL lands inside a write is chance, so
 * after each kill a fragment is appended as a tear would leave it: the next
 * server must cut it off rather than glue its first item onto it.
 */

import assert from "node:assert/strict";
import { cutTornTail, openFeedbackLog, rotatedPath } from "../src/serve/mod.ts";
import { parseJsonlTraces, readTraces } from "../src/traces/mod.ts";
import { createApp } from "../src/http/app.ts";
import { smallTable, tempDir, TOPICS } from "./_fixtures.ts";
import { runServe, startServer, writeTestBundle } from "./_http_helpers.ts";

/** A trace line; all of the same length below 100. */
const LINE = (i: number) =>
  JSON.stringify({
    text: `text ${String(i).padStart(2, "0")}`,
    answers: { topic: TOPICS[0] },
  }) + "\n";

Deno.test("cutTornTail() cuts a last line without a newline, and only that", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/log`;
  const cases: [string, string, number][] = [
    ["", "", 0],
    [LINE(1), LINE(1), 0],
    [LINE(1) + '{"text": "x", "ans', LINE(1), 18],
    ['{"text"', "", 7],
    [LINE(1) + "x".repeat(200_000), LINE(1), 200_000],
  ];
  for (const [before, after, cut] of cases) {
    await Deno.writeTextFile(path, before);
    {
      using file = await Deno.open(path, { read: true, write: true });
      assert.deepEqual(await cutTornTail(file), {
        size: new TextEncoder().encode(after).length,
        cut,
      });
    }
    assert.equal(await Deno.readTextFile(path), after);
  }
});

Deno.test("openFeedbackLog() cuts a torn last line with a warning, and the next item starts a line", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/feedback.jsonl`;
  await Deno.writeTextFile(path, LINE(1) + LINE(2) + '{"text": "torn');
  const warnings: string[] = [];
  const log = await openFeedbackLog(path, { warn: (m) => warnings.push(m) });
  await log.append(LINE(3));
  await log.close();
  assert.equal(await Deno.readTextFile(path), LINE(1) + LINE(2) + LINE(3));
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /torn line \(14 bytes/);
});

Deno.test("openFeedbackLog() rotates at maxBytes into a file trace reading reads", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/feedback.jsonl`;
  const warnings: string[] = [];
  const log = await openFeedbackLog(path, {
    maxBytes: 10 * LINE(0).length,
    warn: (m) => warnings.push(m),
  });
  for (let i = 0; i < 25; i++) await log.append(LINE(i));
  await log.close();
  const rotated = rotatedPath(path);
  assert.equal(rotated, `${dir.path}/feedback.1.jsonl`);
  // 25 lines of 10 per file: two rotations; the first 10 are dropped.
  assert.equal(warnings.length, 2);
  const set = await readTraces([rotated, path]);
  assert.equal(set.texts.length, 15);
  assert.ok((await Deno.stat(path)).size <= 10 * LINE(0).length);
});

Deno.test("openFeedbackLog() keeps the rotated file while a reader holds the log, then rotates", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/feedback.jsonl`;
  const warnings: string[] = [];
  const log = await openFeedbackLog(path, {
    maxBytes: 10 * LINE(0).length,
    warn: (m) => warnings.push(m),
  });
  const rotated = rotatedPath(path);
  for (let i = 0; i < 15; i++) await log.append(LINE(i));
  // One rotation: lines 0-9 in the rotated file, 10-14 in the log.
  const release = log.hold();
  for (let i = 15; i < 30; i++) await log.append(LINE(i));
  // A second rotation was due at line 20; held, the log grows instead, and
  // the rotated file still has every line a reader had not finished.
  assert.equal(warnings.filter((w) => /while a reader/.test(w)).length, 1);
  assert.equal((await readTraces([rotated])).texts.length, 10);
  assert.equal((await readTraces([path])).texts.length, 20);
  release();
  release(); // a second call changes nothing
  await log.append(LINE(30));
  await log.close();
  // Released, the next write rotates: the 20 lines move, 1 starts anew.
  assert.equal((await readTraces([rotated])).texts.length, 20);
  assert.equal((await readTraces([path])).texts.length, 1);
});

Deno.test("reading JSON Lines skips a torn last line with a warning naming file and line", () => {
  const warnings: string[] = [];
  const set = parseJsonlTraces(
    "log.jsonl",
    LINE(1) + LINE(2) + '{"text": "to',
    {
      warn: (m) => warnings.push(m),
    },
  );
  assert.equal(set.texts.length, 2);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /^log\.jsonl:3: the last line is torn/);
  // Without a warning callback, or torn anywhere but last: an error.
  assert.throws(
    () => parseJsonlTraces("log.jsonl", LINE(1) + '{"text": "to'),
    /log\.jsonl:2: not valid JSON/,
  );
  assert.throws(
    () =>
      parseJsonlTraces("log.jsonl", LINE(1) + '{"text": "to\n' + LINE(2), {
        warn: () => {},
      }),
    /log\.jsonl:2: not valid JSON/,
  );
  // A complete last line without its newline is read.
  assert.equal(
    parseJsonlTraces("log.jsonl", LINE(1) + LINE(2).trimEnd(), {
      warn: () => {},
    }).texts.length,
    2,
  );
});

/** Posts large feedback items until the server goes away; resolves then. */
async function postUntilGone(base: string, stop: { now: boolean }) {
  const filler = "invoice parcel password refund ".repeat(300);
  let i = 0;
  while (!stop.now) {
    const items = Array.from({ length: 100 }, () => ({
      question: "topic",
      state: `${i++} ${filler}`,
      answer: TOPICS[i % TOPICS.length],
    }));
    try {
      const res = await fetch(`${base}/v1/feedback`, {
        method: "POST",
        body: JSON.stringify(items),
      });
      await res.body?.cancel();
    } catch {
      return;
    }
  }
}

Deno.test({
  name:
    "a server killed with SIGKILL while writing feedback, six times over one log, leaves a log that reads whole",
  // Needs SIGKILL.
  ignore: Deno.build.os === "windows",
}, async () => {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`);
  const log = `${dir.path}/feedback.jsonl`;
  const cuts: string[] = [];
  for (let round = 0; round < 6; round++) {
    const server = await startServer({
      bundle,
      args: ["--feedback-log", log],
      read: [log],
      write: [log],
    });
    const stop = { now: false };
    const clients = Array.from(
      { length: 4 },
      () => postUntilGone(server.base, stop),
    );
    // Kill once the log has grown by some megabytes in this round.
    const start = (await Deno.stat(log)).size;
    while ((await Deno.stat(log)).size < start + 3_000_000 + round * 300_000) {
      await new Promise((r) => setTimeout(r, 5));
    }
    const end = await server.stop("SIGKILL");
    stop.now = true;
    await Promise.all(clients);
    cuts.push(
      ...end.stderr.split("\n").filter((l) => l.includes("torn line")),
    );
    await Deno.writeTextFile(log, '{"text": "cut short by a cr', {
      append: true,
    });
  }
  // Each restart cut the tear the kill before it left.
  assert.equal(cuts.length, 5, cuts.join("\n"));
  const warnings: string[] = [];
  const set = await readTraces([log], { warn: (m) => warnings.push(m) });
  assert.ok(set.texts.length > 1000, `${set.texts.length} traces read`);
  // The last kill's tear is skipped with a warning.
  assert.equal(warnings.length, 1, warnings.join("\n"));
  assert.match(warnings[0]!, /feedback\.jsonl:\d+: the last line is torn/);
});

Deno.test("the feedback log gets valid traces only: no unknown option, no replayed audit id", async () => {
  const table = { ...smallTable().table };
  const written: string[] = [];
  const app = createApp({
    table,
    bundlePath: "test/bundle",
    live: { auditRate: 1, auditSeed: 1 },
    feedbackLog: (lines) => {
      written.push(...lines.trimEnd().split("\n"));
      return Promise.resolve();
    },
  });
  const post = async (path: string, body: unknown) =>
    await (await app.request(path, {
      method: "POST",
      body: JSON.stringify(body),
    })).json();
  const state = "my invoice was overcharged";
  const decided = await post("/v1/decide", { state });
  const audit = decided.answers.topic.audit as string;
  assert.equal(typeof audit, "string");
  const item = { question: "topic", state, answer: TOPICS[0], audit };
  const first = await post("/v1/feedback", [
    item,
    { question: "topic", state: "what is this", answer: "no_such_option" },
    { question: "urgent", state, answer: true },
  ]);
  assert.equal(first.audits, 1);
  const again = await post("/v1/feedback", item);
  assert.deepEqual(again.missed_audits, [{ audit, reason: "answered" }]);
  const logged = written.map((l) => JSON.parse(l).answers);
  assert.deepEqual(logged, [{ topic: TOPICS[0] }, { urgent: true }]);
});

Deno.test("serve --feedback-log-max-mb needs write access to the rotated name and read access to the log, and says so", async () => {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`);
  const log = `${dir.path}/feedback.jsonl`;
  const end = await runServe(
    ["--bundle", bundle, "--feedback-log", log, "--feedback-log-max-mb", "1"],
    [
      "--allow-net=127.0.0.1",
      `--allow-read=${dir.path}`,
      `--allow-write=${log}`,
      "--allow-env",
    ],
  );
  assert.equal(end.code, 2);
  assert.match(
    end.stderr,
    /rotates .*feedback\.jsonl to .*feedback\.1\.jsonl; allow it with --allow-read=\S+ --allow-write=/,
  );
  // Renaming the log needs read access to it: without it every write after
  // the first rotation would fail, so the server does not start.
  const unreadable = await runServe(
    ["--bundle", bundle, "--feedback-log", log, "--feedback-log-max-mb", "1"],
    [
      "--allow-net=127.0.0.1",
      `--allow-read=${bundle}`,
      `--allow-write=${log},${dir.path}/feedback.1.jsonl`,
      "--allow-env",
    ],
  );
  assert.equal(unreadable.code, 2);
  assert.match(
    unreadable.stderr,
    /rotates .*feedback\.jsonl to .*feedback\.1\.jsonl; allow it with --allow-read=.*feedback\.jsonl --allow-write=/,
  );
  const alone = await runServe([
    "--bundle",
    bundle,
    "--feedback-log-max-mb",
    "1",
  ]);
  assert.equal(alone.code, 2);
  assert.match(alone.stderr, /--feedback-log-max-mb needs --feedback-log FILE/);
});

Deno.test("openFeedbackLog() fails a write whose rotation fails, and rotates on a later one", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/feedback.jsonl`;
  const rotated = rotatedPath(path);
  // A non-empty folder in the way: the rename fails.
  await Deno.mkdir(rotated);
  await Deno.writeTextFile(`${rotated}/x`, "x");
  const log = await openFeedbackLog(path, {
    maxBytes: 2 * LINE(0).length,
    warn: () => {},
  });
  await log.append(LINE(1) + LINE(2));
  await assert.rejects(log.append(LINE(3)));
  await Deno.remove(rotated, { recursive: true });
  await log.append(LINE(4));
  await log.close();
  assert.equal(await Deno.readTextFile(rotated), LINE(1) + LINE(2));
  assert.equal(await Deno.readTextFile(path), LINE(4));
});

Deno.test("openFeedbackLog() without read access starts the next item on a line of its own", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/feedback.jsonl`;
  await Deno.writeTextFile(path, LINE(1) + '{"text": "torn');
  const script = `${dir.path}/append.ts`;
  await Deno.writeTextFile(
    script,
    `import { openFeedbackLog } from "${
      new URL("../src/serve/feedback_log.ts", import.meta.url).href
    }";
const log = await openFeedbackLog(Deno.args[0]);
await log.append(Deno.args[1]);
await log.close();
`,
  );
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--config",
      new URL("../deno.json", import.meta.url).pathname,
      `--allow-read=${script}`,
      `--allow-write=${path}`,
      script,
      path,
      LINE(2),
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.ok(out.success, stderr);
  assert.match(stderr, /cannot be read \(allow it with --allow-read=/);
  assert.equal(
    await Deno.readTextFile(path),
    LINE(1) + '{"text": "torn\n' + LINE(2),
  );
});
