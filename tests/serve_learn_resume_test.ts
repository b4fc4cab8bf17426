/**
 * A learning service stopped with SIGTERM and started again on the same
 * folder goes on where it stopped: its labels, its retrains and their
 * history, the tests it spent and its live certificate's audits are what
 * they were, and the banner says what it found. The first banner on an
 * empty folder says it is learning, with no bundle id of zeros.
 */

import assert from "node:assert/strict";
import { syntheticTraces, tempDir } from "./_fixtures.ts";
import { postJson, startServer } from "./_http_helpers.ts";

type Json = Record<string, unknown>;

const PERMISSIONS = [
  "--allow-net=127.0.0.1",
  "--allow-read",
  "--allow-write",
  "--allow-env",
];

async function stats(base: string): Promise<Json> {
  return await (await fetch(`${base}/v1/stats`)).json();
}

/** The live figures of question `topic` (audits and feedback counted). */
function topicLive(s: Json): Json {
  const live = s.live as Json;
  return (live.questions as Record<string, Json>).topic!;
}

Deno.test("serve --learn resumes after SIGTERM: labels, retrains, tests spent and live audits as they were", async () => {
  await using dir = await tempDir();
  const learn = `${dir.path}/learn`;
  const args = ["--learn", learn, "--semantic", "off", "--audit-seed", "5"];
  const traces = syntheticTraces({ count: 6000, seed: 12, noise: 0.01 });
  const first = await startServer({ args, permissions: PERMISSIONS });
  let before: Json;
  let banner: string;
  try {
    banner = first.output().stdout.split("\n")[0]!;
    assert.match(banner, /learning in .*: no bundle yet \(a new folder\)/);
    assert.doesNotMatch(banner, /000000000000/);
    // Until a bundle certifies and some of its answers were audited.
    const audited = async () => {
      const s = await stats(first.base);
      return (s.learn as Json).swaps as number > 0 &&
        (topicLive(s)?.audited as number ?? 0) >= 5;
    };
    const started = performance.now();
    for (let i = 0; i < traces.length; i++) {
      // At 300 a second: stretches of the ledger settle as the labels come.
      const wait = started + (1000 * i) / 300 - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const t = traces[i]!;
      const { json } = await postJson(first.base, "/v1/decide", {
        state: t.text,
        questions: { topic: {} },
      });
      const a = (json.answers as Record<string, Json>).topic!;
      if (!a.certified || a.audit !== undefined) {
        await postJson(first.base, "/v1/feedback", {
          question: "topic",
          state: t.text,
          answer: t.answers.topic,
          ...(a.audit !== undefined ? { audit: a.audit } : {}),
          ...(a.feedback_id !== undefined
            ? { feedback_id: a.feedback_id }
            : {}),
        });
      }
      if (i % 200 === 199 && await audited()) break;
    }
    // Whatever retrain runs now ends before the stop is measured.
    for (let i = 0; i < 120 && (await stats(first.base)).learn; i++) {
      if (!((await stats(first.base)).learn as Json).running) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    before = await stats(first.base);
  } finally {
    const end = await first.stop("SIGTERM");
    assert.equal(end.code, 0, end.stderr);
  }
  const learnBefore = before.learn as Json;
  assert.ok((learnBefore.swaps as number) >= 1, JSON.stringify(learnBefore));

  const second = await startServer({ args, permissions: PERMISSIONS });
  try {
    const out = second.output().stdout;
    // The banner says what it found.
    assert.match(
      out,
      new RegExp(
        `learning in .*: ${
          (learnBefore.labels as number).toLocaleString("en-US")
        } labels, ${learnBefore.retrains} retrains? \\(${learnBefore.swaps} swapped in\\); bundle [0-9a-f]{12}`,
      ),
    );
    assert.match(out, /live certificate: resumed the evidence of topic/);
    const after = await stats(second.base);
    const learnAfter = after.learn as Json;
    assert.equal(learnAfter.labels, learnBefore.labels);
    assert.equal(learnAfter.retrains, learnBefore.retrains);
    assert.equal(learnAfter.swaps, learnBefore.swaps);
    assert.deepEqual(learnAfter.tests, learnBefore.tests);
    assert.equal(learnAfter.next_retrain_at, learnBefore.next_retrain_at);
    assert.deepEqual(
      (learnAfter.history as Json[]).map((h) => h.labels),
      (learnBefore.history as Json[]).map((h) => h.labels),
    );
    // The live audits: at least those before the stop.
    const liveBefore = topicLive(before);
    const liveAfter = topicLive(after);
    assert.ok(
      (liveAfter.audited as number) >= (liveBefore.audited as number),
      `${liveAfter.audited} audits after, ${liveBefore.audited} before`,
    );
    assert.equal(liveAfter.threshold, liveBefore.threshold);
  } finally {
    const end = await second.stop("SIGTERM");
    assert.equal(end.code, 0, end.stderr);
  }
});
