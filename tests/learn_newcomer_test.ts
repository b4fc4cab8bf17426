/**
 * A newcomer's run of `serve --learn`, checked from the outside as they
 * would read it: an empty folder, a request before any feedback, a few
 * thousand BANKING77 texts through the client (its model: the data's
 * label), some feedback sent without its ids, `inspect --server`, the
 * dashboard in a real browser, and a restart. Every word the service says
 * must be one they can act on: learning, not a zero bundle id; the rates it
 * applies; advice in labels naming no flag `serve` lacks; why an empty
 * reply is empty; totals that match their lines. Skips with a reason
 * without `../shared/data`; the browser step without Chromium.
 */

import assert from "node:assert/strict";
import { DecisionClient } from "../src/client/mod.ts";
import { readTraces } from "../src/traces/mod.ts";
import { rng, tempDir } from "./_fixtures.ts";
import { type RunningServer, startServer } from "./_http_helpers.ts";

const DATA = new URL("../../shared/data/banking77/", import.meta.url).pathname;
const missing = await Deno.stat(`${DATA}train.csv`).then(
  () => null,
  () =>
    `${DATA}train.csv is absent (the public data sets sit beside the project)`,
);
if (missing !== null) console.log(`learn_newcomer_test: skipped, ${missing}`);
const CHROMIUM = "/usr/bin/chromium";
const noBrowser = await Deno.stat(CHROMIUM).then(
  () => null,
  () => `${CHROMIUM} is not installed (apt-get install chromium)`,
);
const MAIN = new URL("../main.ts", import.meta.url).pathname;
const TEXTS = 3000;

// deno-lint-ignore no-explicit-any
type Json = any;

async function stats(base: string): Promise<Json> {
  return await (await fetch(`${base}/v1/stats`)).json();
}

/** Waits (at most 90 s) until no retrain runs and none is due. */
async function caughtUp(base: string): Promise<void> {
  for (let i = 0; i < 360; i++) {
    const { learn } = await stats(base);
    if (learn.running !== true && learn.labels < learn.next_retrain_at) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}

function start(dir: string): Promise<RunningServer> {
  return startServer({
    args: ["--learn", dir, "--semantic", "off"],
    permissions: [
      "--allow-net=127.0.0.1",
      "--allow-read",
      `--allow-write=${dir}`,
      "--allow-env",
    ],
  });
}

Deno.test({
  name:
    "a newcomer's serve --learn says what it is doing, what it found and what would help, in words they can act on",
  ignore: missing !== null,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const traces = await readTraces([`${DATA}train.csv`], {});
    const q = traces.questions[0]!;
    const random = rng(44);
    const rows = Array.from({ length: TEXTS }, () => {
      const i = Math.floor(random() * traces.texts.length);
      return { text: traces.texts[i]!, label: q.options[q.labels[i]!]! };
    });
    const labelOf = new Map(rows.map((r) => [r.text, r.label]));
    await using tmp = await tempDir();
    const dir = `${tmp.path}/learn-dir`;
    let s = await start(dir);
    try {
      await t.step(
        "the first banner says it is learning, with the rates it applies",
        () => {
          const out = s.output().stdout;
          assert.match(
            out,
            /learning in .*learn-dir: no bundle yet \(a new folder\)/,
          );
          assert.doesNotMatch(out, /000000000000/);
          assert.doesNotMatch(out, /audits 2% of certified answers/);
          assert.match(
            out,
            /calibration coin: each decision is picked at its question's rate/,
          );
        },
      );

      await t.step(
        "a request naming no question, before any feedback, says why its answers are empty",
        async () => {
          const res = await fetch(`${s.base}/v1/decide`, {
            method: "POST",
            body: JSON.stringify({ state: "where is my card?" }),
          });
          const reply = await res.json();
          assert.deepEqual(reply.answers, {});
          assert.match(reply.reason, /knows none yet/);
          assert.match(reply.reason, /"questions": \{"intent": \{\}\}/);
        },
      );

      await t.step(
        "a few thousand texts through the client, and a retrain's advice in labels",
        async () => {
          const client = new DecisionClient({
            url: s.base,
            model: ({ state }) => labelOf.get(state as string)!,
          });
          for (const [n, r] of rows.entries()) {
            if (n % 500 === 0) await caughtUp(s.base);
            await client.decide(r.text, { category: {} });
          }
          await caughtUp(s.base);
          const learn = (await stats(s.base)).learn;
          assert.ok(learn.retrains >= 3, `${learn.retrains} retrains`);
          // Labels, never traces; no flag serve --learn lacks.
          const said = JSON.stringify(learn) + s.output().stderr;
          assert.doesNotMatch(said, /--alpha|more traces/);
          assert.ok(learn.labels_per_s > 0);
          // No bundle calibrated yet: what would help, in labels and minutes.
          if (learn.swaps === 0) {
            const need = learn.advice.category;
            assert.ok(need !== undefined, JSON.stringify(learn.history.at(-1)));
            assert.ok(need.more_labels.low >= 0, JSON.stringify(need));
            assert.ok(need.minutes === null || need.minutes.low >= 0);
            assert.match(
              s.output().stderr,
              /what would help: category: (about|over) [\d,-]+ more labels|what would help: category: the labels the learning curve/,
            );
          }
        },
      );

      await t.step("feedback without its ids raises a warning", async () => {
        // A client written before decision ids: the answers, not the ids.
        let sent = 0;
        for (const r of rows.slice(0, 400)) {
          const reply = await (await fetch(`${s.base}/v1/decide`, {
            method: "POST",
            body: JSON.stringify({
              state: r.text,
              questions: { category: {} },
            }),
          })).json();
          if (reply.answers.category.certified) continue;
          await fetch(`${s.base}/v1/feedback`, {
            method: "POST",
            body: JSON.stringify({
              question: "category",
              state: r.text,
              answer: r.label,
            }),
          });
          sent++;
        }
        assert.ok(sent > 0);
        const live = (await stats(s.base)).live;
        assert.equal(live.feedback_without_ids.items, sent);
        assert.match(
          s.output().stderr,
          /warning: feedback came without the feedback_id its decision carried/,
        );
      });

      await t.step(
        "inspect --server: the retrains and passes it lists are the totals it states",
        async () => {
          const out = await new Deno.Command(Deno.execPath(), {
            args: ["run", "-A", MAIN, "inspect", "--server", s.base],
            stdout: "piped",
            stderr: "piped",
          }).output();
          const text = new TextDecoder().decode(out.stdout);
          const head =
            /(\d+) retrains, (\d+) swapped in; (?:the last (\d+) )?below, with their (\d+) passes/
              .exec(text);
          assert.ok(head !== null, text);
          const retrains = text.match(/^ {2}retrain \d+: \d+ pass/gm) ?? [];
          const passes =
            text.match(/^ {4}\S+: the (?:table's|encoder's) pass/gm) ?? [];
          assert.equal(retrains.length, Number(head[3] ?? head[1]), text);
          assert.equal(passes.length, Number(head[4]), text);
          assert.match(
            text,
            /picks each decision at its question's rate|audits/,
          );
        },
      );

      await t.step({
        name:
          "the dashboard leads with the Learning card, its chart with a legend",
        ignore: noBrowser !== null,
        fn: async () => {
          const { withPage } = await import("./_browser_playwright.ts");
          await withPage(`${s.base}/`, async (page) => {
            await page.waitForSelector("#card-learn:not([hidden])");
            const first = await page.evaluate(
              "document.querySelector('#card-learn').parentElement.firstElementChild.id",
            );
            assert.equal(first, "card-learn");
            assert.equal(await page.isVisible("#learn-legend"), true);
            assert.match(
              await page.textContent("#learn-legend") ?? "",
              /certified share.*model calls\s+saved/s,
            );
            assert.match(
              await page.textContent("#bundle-path") ?? "",
              /^Learning in /,
            );
            assert.equal(await page.isVisible("#idless-banner"), true);
          });
        },
      });

      await t.step("the ledger's rate is the one the stats show", async () => {
        const before = await stats(s.base);
        await s.stop("SIGTERM");
        const ledger = (await Deno.readTextFile(`${dir}/feedback.jsonl`))
          .split("\n").filter((l) => l.startsWith('{"ledger"'))
          .map((l) => JSON.parse(l).ledger)
          .filter((e: Json) => e.question === "category");
        const last = ledger.at(-1);
        assert.ok(last !== undefined);
        assert.equal(
          last.rate,
          before.live.rates.category ?? before.live.audit_rate,
        );
        s = await start(dir);
        const banner = s.output().stdout;
        assert.match(
          banner,
          new RegExp(
            `learning in .*learn-dir: (no bundle yet \\()?${
              before.learn.labels.toLocaleString("en-US")
            } labels, \\d+ retrains`,
          ),
        );
      });
    } finally {
      await s.stop("SIGTERM").catch(() => {});
    }
  },
});
