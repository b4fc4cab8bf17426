/**
 * The text-substitution attack on a learning service, over real processes
 * and 20,000 BANKING77 decisions. The proxy answers audits honestly and,
 * for the uncertified answers, does what broke the learner before ids
 * bound their text: it swaps the labels of 20 pairs of options, sends the
 * feedback of the decisions it takes for calibration picks under other,
 * easy texts (earlier ones, with their true labels), and leaves one
 * decision per 5-second stretch unanswered so that no stretch is a census.
 * No byte of an id tells a pick now, so it guesses: a quarter of the
 * uncertified answers, at random.
 *
 * Checked: no substituted item is taken (each is `text_mismatch`) or
 * logged; no bundle swapped in disagrees with the true labels of
 * `test.csv` above alpha among the answers it certifies. Skips with a
 * reason without `../shared/data`.
 */

import assert from "node:assert/strict";
import { Answerer, peekGuard } from "../src/engine/mod.ts";
import { loadBundle } from "../src/bundle/mod.ts";
import { readTraces, type TraceSet } from "../src/traces/mod.ts";
import { auditLogName } from "../src/live/_log_name.ts";
import { rng, tempDir } from "./_fixtures.ts";
import { startServer } from "./_http_helpers.ts";

const DATA = new URL("../../shared/data/banking77/", import.meta.url).pathname;
const missing = await Deno.stat(`${DATA}train.csv`).then(
  () => null,
  () =>
    `${DATA}train.csv is absent (the public data sets sit beside the project)`,
);
if (missing !== null) {
  console.log(`learn_substitution_attack_test: skipped, ${missing}`);
}

const DECISIONS = 20_000;
const ALPHA = 0.05;
/** The stretch the ledger counts decisions in (`LEDGER_STRETCH_MS`). */
const STRETCH_MS = 5000;

/** Text and label of each row of a BANKING77 file. */
function rows(t: TraceSet): { text: string; label: string }[] {
  const q = t.questions[0]!;
  return t.texts.map((text, i) => ({ text, label: q.options[q.labels[i]!]! }));
}

async function post(base: string, path: string, body: unknown) {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  assert.equal(res.status, 200, `${path}: ${JSON.stringify(json)}`);
  return json;
}

/**
 * Waits (at most a minute) until the learner at `base` runs no retrain
 * and none is due: its labels are below the next retrain's.
 */
async function caughtUp(base: string): Promise<void> {
  for (let i = 0; i < 240; i++) {
    const { learn } = await (await fetch(`${base}/v1/stats`)).json();
    if (learn.running !== true && learn.labels < learn.next_retrain_at) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Of the answers `bundle` certifies on `test`, the share whose option is not the true label. */
async function certifiedDisagreement(
  bundle: string,
  test: { text: string; label: string }[],
): Promise<{ certified: number; wrong: number }> {
  const table = await loadBundle(bundle);
  const answerer = new Answerer(table);
  const guard = peekGuard(answerer.monitor);
  let certified = 0;
  let wrong = 0;
  for (const r of test) {
    const a = answerer.answer(answerer.prepare(r.text), "category", {}, guard);
    if (!a.answer.certified) continue;
    certified++;
    if (a.answer.choice !== r.label) wrong++;
  }
  return { certified, wrong };
}

/** What a stream through a learner gave: the learner's folder and the proxy's figures. */
interface StreamResult {
  learn: string;
  substituted: Set<string>;
  refused: number;
  taken: number;
}

/**
 * Streams 20,000 BANKING77 `train.csv` texts (a seeded draw) through `serve
 * --learn` (table only), the proxy answering as the module doc says;
 * `check` reads the result before the folder is removed.
 */
async function learnerStream(
  check: (r: StreamResult) => Promise<void>,
): Promise<void> {
  const train = rows(await readTraces([`${DATA}train.csv`], {}));
  const random = rng(20261207);
  const options = [...new Set(train.map((r) => r.label))].sort();
  // 20 pairs of options swapped, drawn at random.
  const shuffled = [...options].sort(() => random() - 0.5);
  const swap = new Map<string, string>();
  for (let i = 0; i < 40; i += 2) {
    swap.set(shuffled[i]!, shuffled[i + 1]!);
    swap.set(shuffled[i + 1]!, shuffled[i]!);
  }
  const stream = Array.from(
    { length: DECISIONS },
    () => train[Math.floor(random() * train.length)]!,
  );
  await using dir = await tempDir();
  const learn = `${dir.path}/learn`;
  const s = await startServer({
    args: ["--learn", learn, "--semantic", "off"],
    permissions: [
      "--allow-net=127.0.0.1",
      "--allow-read",
      `--allow-write=${dir.path}`,
      "--allow-env",
    ],
  });
  const result: StreamResult = {
    learn,
    substituted: new Set(),
    refused: 0,
    taken: 0,
  };
  try {
    const easy: { text: string; label: string }[] = [];
    let stretch = -1;
    for (const [n, item] of stream.entries()) {
      // The learner keeps up, as it would at a service's pace: every
      // 1,000 decisions, the retrain due has run.
      if (n % 1000 === 0) await caughtUp(s.base);
      const reply = await post(s.base, "/v1/decide", {
        state: item.text,
        questions: { category: {} },
      });
      const a = reply.answers.category;
      if (a.certified) {
        easy.push(item);
        if (a.audit !== undefined) {
          await post(s.base, "/v1/feedback", {
            question: "category",
            state: item.text,
            answer: item.label,
            audit: a.audit,
          });
        }
        continue;
      }
      // One decision per stretch unanswered: no stretch is a census.
      const now = Math.floor(Date.now() / STRETCH_MS);
      if (now !== stretch) {
        stretch = now;
        continue;
      }
      const id = a.feedback_id as string;
      // The kind byte of an id once told a pick (1); else a guess.
      const told =
        (Uint8Array.fromBase64(id, { alphabet: "base64url" })[41]! & 3) === 1;
      if ((told || random() < 0.25) && easy.length > 0) {
        const other = easy[Math.floor(random() * easy.length)]!;
        if (other.text === item.text) continue;
        result.substituted.add(auditLogName(id));
        const fb = await post(s.base, "/v1/feedback", {
          question: "category",
          state: other.text,
          answer: other.label,
          feedback_id: id,
        });
        result.taken += fb.feedback + fb.audits + fb.traces_only;
        if (fb.missed_audits[0]?.reason === "text_mismatch") result.refused++;
        continue;
      }
      await post(s.base, "/v1/feedback", {
        question: "category",
        state: item.text,
        answer: swap.get(item.label) ?? item.label,
        feedback_id: id,
      });
      easy.push(item);
    }
    await caughtUp(s.base);
  } finally {
    await s.stop();
  }
  await check(result);
}

/** Each bundle version in the learner's folder: its certified answers on `test.csv`, and those against the true label. */
async function versions(
  learn: string,
): Promise<{ name: string; certified: number; wrong: number }[]> {
  const test = rows(await readTraces([`${DATA}test.csv`], {}));
  const out = [];
  for await (const e of Deno.readDir(learn)) {
    if (!e.isDirectory) continue;
    out.push({
      name: e.name,
      ...await certifiedDisagreement(`${learn}/${e.name}`, test),
    });
  }
  return out;
}

/** The learner's passes (`retrains.jsonl`). */
async function passes(learn: string): Promise<{ swapped: boolean }[]> {
  return (await Deno.readTextFile(`${learn}/retrains.jsonl`).catch(() => ""))
    .split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}

Deno.test({
  name:
    "the text-substitution attack on a learner: no substituted item taken or logged, no bundle swapped in above alpha on test.csv",
  ignore: missing !== null,
  async fn() {
    await learnerStream(async (r) => {
      assert.ok(r.substituted.size > 500, `${r.substituted.size} substituted`);
      assert.equal(
        r.taken,
        0,
        "no substituted item was taken, even as a trace",
      );
      assert.equal(
        r.refused,
        r.substituted.size,
        "each was refused as text_mismatch",
      );
      // None of them is in the log the learner learns from.
      const logged = (await Deno.readTextFile(`${r.learn}/feedback.jsonl`))
        .split("\n").filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l).feedback?.id as string | undefined);
      assert.equal(
        logged.filter((id) => id !== undefined && r.substituted.has(id)).length,
        0,
      );
      const history = await passes(r.learn);
      console.log(
        `substitution attack: ${r.substituted.size} substituted items refused, ${history.length} passes, ${
          history.filter((h) => h.swapped).length
        } swapped in`,
      );
      for (const v of await versions(r.learn)) {
        console.log(
          `  ${v.name}: certifies ${v.certified} test texts, ${v.wrong} of them against the true label`,
        );
        assert.ok(
          v.certified === 0 || v.wrong / v.certified <= ALPHA,
          `${v.name}: ${v.wrong} of ${v.certified} certified answers disagree`,
        );
      }
    });
  },
});
