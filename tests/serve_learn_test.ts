/**
 * `serve --learn DIR` over real processes: from no bundle at all, a
 * proxy that asks its model for every uncertified answer and audit and
 * sends the answer back with the id the service gave; the service learns
 * the question, its kind and options, retrains, swaps a bundle in and
 * certifies; an option the model adds holds the question until a retrain
 * learns it; and the feedback log alone trains a bundle with `train`.
 */

import assert from "node:assert/strict";
import { loadBundle } from "../src/bundle/mod.ts";
import {
  runCli,
  type SyntheticTrace,
  syntheticTraces,
  tempDir,
} from "./_fixtures.ts";
import { postJson, startServer } from "./_http_helpers.ts";

type Json = Record<string, unknown>;

/** The proxy: asks for a decision and, unless certified and not audited, sends the model's answer back. */
async function proxy(
  base: string,
  t: SyntheticTrace,
  answer: string,
): Promise<Json> {
  const { json } = await postJson(base, "/v1/decide", {
    state: t.text,
    questions: { topic: {} },
  });
  const a = (json.answers as Record<string, Json>).topic!;
  if (!a.certified || a.audit !== undefined) {
    const fb = await postJson(base, "/v1/feedback", {
      question: "topic",
      state: t.text,
      answer,
      ...(a.audit !== undefined ? { audit: a.audit } : {}),
      ...(a.feedback_id !== undefined ? { feedback_id: a.feedback_id } : {}),
    });
    assert.equal(fb.status, 200, JSON.stringify(fb.json));
  }
  return a;
}

async function stats(base: string): Promise<Json> {
  return await (await fetch(`${base}/v1/stats`)).json();
}

/** Streams `traces` at about `perSecond`, until `done` says so (or they run out). */
async function stream(
  base: string,
  traces: SyntheticTrace[],
  perSecond: number,
  done: () => Promise<boolean>,
  relabel: (t: SyntheticTrace) => string = (t) => t.answers.topic as string,
): Promise<Json[]> {
  const started = performance.now();
  const answers: Json[] = [];
  for (let i = 0; i < traces.length; i++) {
    const wait = started + (1000 * i) / perSecond - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    answers.push(await proxy(base, traces[i]!, relabel(traces[i]!)));
    if (i % 100 === 99 && await done()) break;
  }
  return answers;
}

Deno.test("serve --learn from no bundle learns the question from its feedback, swaps a bundle in and certifies; an added option holds it until learned; train reads the log alone", async (t) => {
  await using dir = await tempDir();
  const learn = `${dir.path}/learn`;
  const s = await startServer({
    args: ["--learn", learn, "--semantic", "off", "--audit-seed", "3"],
    permissions: [
      "--allow-net=127.0.0.1",
      "--allow-read",
      "--allow-write",
      "--allow-env",
    ],
  });
  const traces = syntheticTraces({ count: 9000, seed: 11, noise: 0.01 });
  // (4,000 to learn, then the model changes its mind on one option.)
  try {
    await t.step(
      "before any bundle: uncalibrated with a best guess, a feedback id, no certificate",
      async () => {
        const { json } = await postJson(s.base, "/v1/decide", {
          state: "where is my parcel",
          questions: { topic: { criteria: ["billing", "shipping"] } },
        });
        const a = (json.answers as Record<string, Json>).topic!;
        assert.equal(a.certified, false);
        assert.equal(a.flag, "uncalibrated");
        assert.equal(a.choice, "billing");
        assert.deepEqual(a.probabilities, { billing: 0.5, shipping: 0.5 });
        assert.match(a.feedback_id as string, /^[A-Za-z0-9_-]{104}$/);
        // The decision-model shapes keep `unsupported` for a question the
        // bundle lacks, as the interface has it, and still learn from it.
        const d = await postJson(s.base, "/v1/decisions", {
          input: "where is my parcel",
          questions: [{
            type: "choice",
            name: "topic",
            instructions: "",
            choices: [{ value: "billing" }],
          }],
        });
        const service = (d.json.answers as Json[])[0]!.service as Json;
        assert.equal(service.flag, "unsupported");
        assert.match(service.feedback_id as string, /^[A-Za-z0-9_-]{104}$/);
      },
    );

    await t.step(
      "the first bundle: retrained on the labels, swapped in, certified",
      async () => {
        const swapped = async () =>
          ((await stats(s.base)).learn as Json).swaps as number > 0;
        await stream(s.base, traces.slice(0, 4000), 300, swapped);
        for (let i = 0; i < 60 && !await swapped(); i++) {
          await new Promise((r) => setTimeout(r, 500));
        }
        const learnStats = (await stats(s.base)).learn as Json;
        assert.ok(
          (learnStats.swaps as number) >= 1,
          JSON.stringify(learnStats.history),
        );
        const table = await loadBundle(`${learn}/bundle`);
        assert.deepEqual(table.questions.map((q) => q.name), ["topic"]);
        assert.notEqual(table.questions[0]!.calibration.threshold, null);
        // Now most answers are certified, and what the model added next is its own.
        const after = await stream(
          s.base,
          traces.slice(4000, 4400),
          400,
          () => Promise.resolve(false),
        );
        const certified = after.filter((a) => a.certified).length;
        assert.ok(certified > after.length / 2, `${certified} certified`);
        const metrics = await (await fetch(`${s.base}/metrics`)).text();
        assert.match(metrics, /^dtable_learn_swaps_total [1-9]/m);
      },
    );

    await t.step(
      "an option the model adds holds the question until a retrain learns it",
      async () => {
        // The model now answers "invoice", an option nobody declared,
        // where it answered "billing".
        const relabel = (x: SyntheticTrace) =>
          x.answers.topic === "billing" ? "invoice" : x.answers.topic as string;
        const held = async () =>
          (((await stats(s.base)).learn as Json).held as string[]).length > 0;
        // Certified answers are labelled only when audited: the first
        // "invoice" may take a while.
        const checked = await stream(
          s.base,
          traces.slice(4400, 5400),
          400,
          held,
          relabel,
        );
        assert.ok(await held(), "the question is held");
        const { json } = await postJson(s.base, "/v1/decide", {
          state: traces[4400 + checked.length]!.text,
          questions: { topic: {} },
        });
        const a = (json.answers as Record<string, Json>).topic!;
        assert.equal(a.certified, false);
        assert.equal(a.flag, "options_changed");
        // Enough labels of the new option, and a retrain learns it.
        const learned = async () => {
          try {
            return (await loadBundle(`${learn}/bundle`)).questions[0]!
              .optionIndex.has("invoice");
          } catch {
            return false;
          }
        };
        // Calibration then stands for the traffic since the change: a
        // census of it, every answer asked while the question is held.
        await stream(
          s.base,
          traces.slice(4400 + checked.length, 9000),
          150,
          learned,
          relabel,
        );
        for (let i = 0; i < 60 && !await learned(); i++) {
          await new Promise((r) => setTimeout(r, 500));
        }
        assert.ok(await learned(), "the new option is learned");
        // Held no more, the question is calibrated on the labels since the
        // change alone: the next retrain counts their growth, not the whole
        // log's (a quarter more of some 5,000 labels would wait 1,250).
        let learnStats = (await stats(s.base)).learn as Json;
        for (let i = 0; i < 60 && learnStats.running; i++) {
          await new Promise((r) => setTimeout(r, 500));
          learnStats = (await stats(s.base)).learn as Json;
        }
        assert.deepEqual(learnStats.held, []);
        const last = (learnStats.history as Json[]).at(-1)!.labels as number;
        assert.ok(
          (learnStats.next_retrain_at as number) < Math.ceil(last * 1.25),
          JSON.stringify({ last, next: learnStats.next_retrain_at }),
        );
      },
    );
  } finally {
    const end = await s.stop();
    assert.equal(end.code, 0, end.stderr);
  }

  await t.step(
    "train --traces DIR/feedback.jsonl alone calibrates on the ledger; without it, nothing does",
    async () => {
      const log = `${learn}/feedback.jsonl`;
      const run = await runCli([
        "train",
        "--traces",
        log,
        "--semantic",
        "off",
        "--out",
        `${dir.path}/from-log`,
      ]);
      assert.equal(run.code, 0, run.stdout + run.stderr);
      assert.match(run.stdout, /from the feedback log's ledger/);
      const bare = `${dir.path}/no-ledger.jsonl`;
      await Deno.writeTextFile(
        bare,
        (await Deno.readTextFile(log)).split("\n").filter((l) =>
          l !== "" && !l.startsWith('{"ledger"') && !l.startsWith('{"pick"')
        ).join("\n") + "\n",
      );
      const refused = await runCli([
        "train",
        "--traces",
        bare,
        "--semantic",
        "off",
        "--out",
        `${dir.path}/from-bare`,
      ]);
      // Every line is then a biased sample: it trains, and none calibrates.
      assert.equal(refused.code, 3, refused.stdout + refused.stderr);
    },
  );
});
