/**
 * The attacks on the live certificate, reproduced on real processes: an
 * echoing proxy (it answers every audit and every uncertified answer with
 * the table's own choice) and a lying one (a wrong option on audits), on a
 * BANKING77 bundle trained from `../shared/data`, then a fleet with Redis
 * where a liar's stricter threshold survives a restart of every replica
 * until `inspect --server --live-reset` clears it fleet-wide.
 */

import assert from "node:assert/strict";
import { parse } from "csv-parse/sync";
import { runCli, tempDir } from "./_fixtures.ts";
import {
  postFeedback,
  postJson,
  type RunningServer,
  startServer,
  writeTestBundle,
} from "./_http_helpers.ts";
import {
  type Json,
  missingRedis,
  replicaStarter,
  stats,
  withRedis,
} from "./_fleet.ts";

const DATA = new URL("../../shared/data/", import.meta.url).pathname;
const TRAIN = `${DATA}banking77/train.csv`;
const TEST = `${DATA}banking77/test.csv`;

function missingData(): string | null {
  try {
    Deno.statSync(TRAIN);
    Deno.statSync(TEST);
    return null;
  } catch {
    console.log(
      `serve_live_feedback_test: ignored: no BANKING77 data at ${DATA}banking77/`,
    );
    return "missing";
  }
}
const noData = missingData();
const noRedis = missingRedis("serve_live_feedback_test");

/** The BANKING77 bundle of the 10k training traces (a few seconds to train), in `dir`. */
async function banking(dir: string): Promise<string> {
  const out = `${dir}/banking77`;
  const r = await runCli(["train", "--traces", TRAIN, "--out", out, "--quiet"]);
  assert.equal(r.code, 0, r.stderr);
  return out;
}

/** A server of the BANKING77 bundle (trained in `dir`) auditing 5% of answers, drawn with `seed`. */
async function serveBanking(dir: string, seed: number): Promise<RunningServer> {
  return await startServer({
    bundle: await banking(dir),
    args: ["--audit-rate", "0.05", "--audit-seed", String(seed)],
  });
}

function testTexts(): string[] {
  const rows = parse(Deno.readTextFileSync(TEST), { columns: true }) as {
    text: string;
  }[];
  return rows.map((r) => r.text);
}

async function metrics(s: RunningServer): Promise<string> {
  return await (await fetch(`${s.base}/metrics`)).text();
}

/** Every live rate a summary shows, in percent. */
function ratesShown(summary: string): number[] {
  return [...summary.matchAll(/live rate (?:([\d.]+)%|100% at most)/g)].map((
    m,
  ) => m[1] === undefined ? 100 : Number(m[1]));
}

Deno.test({
  name:
    "an echoing proxy on BANKING77 (every audit and uncertified answer echoed, 3,500 decisions at audit rate 0.05) never moves the threshold below the bundle's, and is named in /v1/stats and /metrics",
  ignore: noData !== null,
  async fn() {
    await using dir = await tempDir();
    const s = await serveBanking(dir.path, 7);
    try {
      const texts = testTexts();
      const first = (await stats(s)).live.questions.category;
      const bundleThreshold = first.bundle_threshold as number;
      assert.ok(first.feedback_check !== null, "the bundle has bands");
      let items = 0;
      let namedAt: number | null = null;
      let lowest = Infinity;
      for (let i = 0; i < 3500; i++) {
        const state = texts[i % texts.length]!;
        const { json } = await postJson(s.base, "/v1/decide", { state });
        const a = (json.answers as Json).category;
        if (a.certified && a.audit === undefined) continue;
        // The echo: the table's own choice, as the model's answer.
        const item: Json = { question: "category", state, answer: a.choice };
        if (a.audit !== undefined) item.audit = a.audit;
        await postJson(s.base, "/v1/feedback", item);
        items++;
        if (items % 10 === 0 || i === 3499) {
          const q = (await stats(s)).live.questions.category;
          if (q.threshold !== null) lowest = Math.min(lowest, q.threshold);
          if (namedAt === null && q.feedback_check.agrees_too_much) {
            namedAt = items;
          }
        }
      }
      const q = (await stats(s)).live.questions.category;
      console.log(
        `echo on BANKING77: ${items} feedback items; named after ${namedAt}; lowest threshold in force ${
          lowest.toFixed(3)
        } (bundle's ${bundleThreshold.toFixed(3)}); ${q.summary}`,
      );
      assert.ok(lowest >= bundleThreshold, `threshold fell to ${lowest}`);
      assert.notEqual(q.reason, "live_lower");
      assert.equal(q.feedback_check.status, "suspect");
      assert.equal(q.feedback_check.agrees_too_much, true);
      assert.equal(q.feedback_check.lenient_allowed, false);
      assert.ok(namedAt !== null && namedAt <= 300, `named at ${namedAt}`);
      assert.match(q.summary, /SUSPECT FEEDBACK: agrees far more/);
      const m = await metrics(s);
      assert.match(
        m,
        /dtable_live_feedback_agrees_too_much\{question="category"\} 1/,
      );
    } finally {
      await s.stop();
    }
  },
});

Deno.test({
  name:
    "a lying proxy on BANKING77 is named after a few lies, the live rate is never shown above 100%, and a reset starts the question afresh (audits given before it are not_shared)",
  ignore: noData !== null,
  async fn() {
    await using dir = await tempDir();
    const s = await serveBanking(dir.path, 3);
    try {
      const texts = testTexts();
      let lies = 0;
      let named: number | null = null;
      let spare: Json | null = null;
      for (let i = 0; i < 4000 && (named === null || spare === null); i++) {
        const state = texts[(i * 7) % texts.length]!;
        const { json } = await postJson(s.base, "/v1/decide", { state });
        const a = (json.answers as Json).category;
        if (a.audit === undefined) continue;
        if (named !== null) {
          spare = {
            question: "category",
            state,
            audit: a.audit,
            answer: a.choice,
          };
          continue;
        }
        // A wrong option: any other category.
        const wrong = a.choice === "card_arrival"
          ? "card_linking"
          : "card_arrival";
        const { json: reply } = await postFeedback(
          s.base,
          state,
          wrong,
          a.audit,
          "category",
        );
        assert.equal(reply.audits, 1);
        lies++;
        const q = (await stats(s)).live.questions.category;
        for (const r of ratesShown(q.summary)) assert.ok(r <= 100, q.summary);
        assert.ok(q.estimate === null || q.estimate <= 1, `${q.estimate}`);
        if (q.feedback_check.disagrees_too_much) named = lies;
      }
      const q = (await stats(s)).live.questions.category;
      console.log(`liar on BANKING77: named after ${named} lies; ${q.summary}`);
      assert.ok(named !== null && named <= 6, `named after ${named}`);
      assert.match(q.summary, /SUSPECT FEEDBACK: disagrees far more/);
      assert.match(
        await metrics(s),
        /dtable_live_feedback_disagrees_too_much\{question="category"\} 1/,
      );
      // The reset, by the CLI.
      const reset = await runCli([
        "inspect",
        "--server",
        s.base,
        "--live-reset",
        "--question",
        "category",
      ]);
      assert.equal(reset.code, 0, reset.stderr);
      assert.match(reset.stdout, /reset the live evidence of "category"/);
      const after = (await stats(s)).live;
      assert.equal(after.questions.category.audited, 0);
      assert.equal(after.questions.category.reason, "bundle");
      assert.equal(after.questions.category.feedback_check.status, "ok");
      assert.equal(after.resets.total, 1);
      assert.equal(after.resets.last[0].question, "category");
      assert.match(await metrics(s), /dtable_live_resets_total 1/);
      // An audit given before the reset is not the new evidence's.
      const { json: late } = await postJson(s.base, "/v1/feedback", spare!);
      assert.deepEqual(late.missed_audits, [
        { audit: spare!.audit, reason: "not_shared" },
      ]);
      // A question the bundle lacks: a 400 naming the ones it has.
      const bad = await runCli([
        "inspect",
        "--server",
        s.base,
        "--live-reset",
        "--question",
        "categroy",
      ]);
      assert.notEqual(bad.code, 0);
      assert.match(bad.stderr, /did you mean "category"/);
    } finally {
      await s.stop();
    }
  },
});

function testRows(): { text: string; category: string }[] {
  return parse(Deno.readTextFileSync(TEST), { columns: true }) as {
    text: string;
    category: string;
  }[];
}

Deno.test({
  name:
    "a liar on audits amid honest uncertified feedback on BANKING77 (audit rate 0.05) is named within 10 lies, the audits named as where the disagreements are",
  ignore: noData !== null,
  async fn() {
    await using dir = await tempDir();
    const s = await serveBanking(dir.path, 11);
    try {
      const rows = testRows();
      let lies = 0;
      let honest = 0;
      let named: number | null = null;
      let moved: number | null = null;
      let pending: Json[] = [];
      for (let i = 0; i < 6000 && named === null; i++) {
        const { text: state, category } = rows[(i * 13) % rows.length]!;
        const { json } = await postJson(s.base, "/v1/decide", { state });
        const a = (json.answers as Json).category;
        if (a.audit !== undefined) {
          // A lie: any option but the table's.
          const wrong = a.choice === "card_arrival"
            ? "card_linking"
            : "card_arrival";
          await postFeedback(s.base, state, wrong, a.audit, "category");
          lies++;
        } else if (!a.certified) {
          // The truth, for every uncertified answer, in requests of 20.
          pending.push({ question: "category", state, answer: category });
          honest++;
        }
        if (pending.length >= 20 || a.audit !== undefined) {
          if (pending.length > 0) {
            const { status } = await postJson(s.base, "/v1/feedback", pending);
            assert.equal(status, 200);
            pending = [];
          }
          const q = (await stats(s)).live.questions.category;
          if (moved === null && q.reason !== "bundle") moved = lies;
          if (q.feedback_check.disagrees_too_much) named = lies;
        }
      }
      const q = (await stats(s)).live.questions.category;
      console.log(
        `liar on audits amid ${honest} honest reports on BANKING77: threshold moved after ${moved} lies, named after ${named}; ${q.summary}`,
      );
      assert.ok(named !== null && named <= 10, `named after ${named}`);
      assert.equal(q.feedback_check.disagrees_in, "audits");
      assert.match(
        q.summary,
        /SUSPECT FEEDBACK: disagrees far more .* on the audits/,
      );
      assert.ok(q.feedback_check.disagree_audits_log10_capital > 2.6);
    } finally {
      await s.stop();
    }
  },
});

Deno.test({
  name:
    "a fleet with Redis: a liar's stricter threshold and alarm survive a restart of every replica; one reset clears them on all, and the next restart keeps the reset",
  ignore: noRedis !== null,
  fn: () =>
    withRedis(async (redis, dir) => {
      const bundle = await writeTestBundle(`${dir.path}/bundle`);
      const start = await replicaStarter({
        bundle,
        dir: dir.path,
        store: redis.url,
        auditRate: "0.5",
      });
      let rs = await Promise.all([1, 2, 3].map((i) => start(`r${i}`, i)));
      const topic = async (s: RunningServer) =>
        (await stats(s)).live.questions.topic;
      const settle = async (ok: (q: Json) => boolean) => {
        const end = Date.now() + 5000;
        for (;;) {
          const qs = await Promise.all(rs.map(topic));
          if (qs.every(ok) || Date.now() > end) return qs;
          await new Promise((r) => setTimeout(r, 100));
        }
      };
      try {
        const texts = [
          "my invoice was overcharged",
          "the parcel never arrived",
          "refund the double charge on my bill",
          "where is my package",
          "billing statement looks wrong",
        ];
        let lies = 0;
        for (let i = 0; i < 2000; i++) {
          const at = rs[i % 3]!;
          const state = `${texts[i % texts.length]} ${i}`;
          const { json } = await postJson(at.base, "/v1/decide", {
            state,
            questions: { topic: {} },
          });
          const a = (json.answers as Json).topic;
          if (a.audit === undefined) continue;
          const wrong = a.choice === "billing" ? "shipping" : "billing";
          await postFeedback(rs[(i + 1) % 3]!.base, state, wrong, a.audit);
          lies++;
          const q = await topic(at);
          if (q.reason !== "bundle" && q.feedback_check.disagrees_too_much) {
            break;
          }
        }
        const before = await settle((q) => q.reason !== "bundle");
        console.log(
          `fleet liar: ${lies} lies; replicas show ${
            before.map((q) =>
              `${q.reason} ${q.threshold} ${q.feedback_check.disagree_audits_log10_capital} ${q.feedback_check.alarm_log10_capital}`
            ).join(", ")
          }`,
        );
        for (const q of before) {
          assert.notEqual(q.reason, "bundle");
          assert.equal(q.feedback_check.disagrees_too_much, true);
        }
        // Every replica restarts: the evidence and the alarm are the store's.
        await Promise.all(rs.map((s) => s.stop()));
        rs = await Promise.all([1, 2, 3].map((i) => start(`r${i}`, 10 + i)));
        const restarted = await settle((q) => q.reason !== "bundle");
        for (const q of restarted) {
          assert.equal(q.reason, before[0]!.reason);
          assert.equal(q.feedback_check.disagrees_too_much, true);
        }
        // One reset, at one replica, clears every replica.
        const reset = await runCli([
          "inspect",
          "--server",
          rs[1]!.base,
          "--live-reset",
        ]);
        assert.equal(reset.code, 0, reset.stderr);
        assert.match(reset.stdout, /on every replica/);
        const cleared = await settle((q) =>
          q.reason === "bundle" && q.feedback_check.status === "ok" &&
          q.audited === 0
        );
        for (const q of cleared) {
          assert.equal(q.reason, "bundle");
          assert.equal(q.feedback_check.status, "ok");
          assert.equal(q.audited, 0);
        }
        for (const s of rs) assert.ok((await stats(s)).live.resets.total >= 1);
        // A restart after the reset keeps it: the store's generation moved.
        await Promise.all(rs.map((s) => s.stop()));
        rs = await Promise.all([1, 2, 3].map((i) => start(`r${i}`, 20 + i)));
        for (const q of await Promise.all(rs.map(topic))) {
          assert.equal(q.reason, "bundle");
          assert.equal(q.feedback_check.status, "ok");
        }
      } finally {
        await Promise.all(rs.map((s) => s.stop()));
      }
    }),
});
