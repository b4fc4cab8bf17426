/**
 * The live certificate benchmark (issue 11): a stream of requests replayed
 * through a real `main.ts serve` by a simulated proxy (the client of
 * `src/client/`, its "model" answering with the data's labels), and the
 * cost of feedback measured in process.
 *
 * - Exchangeable stream: a table trained on BANKING77 `train.csv`, the
 *   `test.csv` texts resampled to `--requests` requests. Certified share over
 *   the second half with audits, beside the same stream without audits; the
 *   threshold must never be withdrawn.
 * - Shifted stream: a table trained on paraphrase families of `train.csv`
 *   with a plain random split (`--split random --similarity 1`), whose
 *   threshold is too lenient for `test.csv`. With `--shift-rate` (0.05), the
 *   second-half disagreement among certified answers should be at most alpha
 *   with at least 70% certified. Its out-of-scope rule is off by default
 *   (`--shift-scope-p 0`): at the default level (0.05) the rule withholds the
 *   shifted texts the table is least sure of, the certified answers disagree
 *   at 6.3% instead of 8.4%, and audits at R = 0.05 need about 3,600 of them
 *   to refute alpha 5% at that rate, more than the stream gives; the live
 *   certificate's correction would not show. `--shifted-only` runs only
 *   this stream.
 * - Feedback cost: server time per feedback sample (parse, count, decide),
 *   audits and traces, in batches of 1 and 100, with the feedback check
 *   (the bundle's calibration bands) and without.
 * - The feedback check: the cost of one feedback item and the live
 *   decision with and without it, and how many feedback items an echoing
 *   proxy and a lying one need before they are named.
 * - Reload under load: `wrk` on `/v1/decide` while the bundle is reloaded by
 *   SIGHUP; no request may fail.
 * - With `--replicas N` (N > 1), only the fleet (`bench_live_fleet.ts`): N
 *   replicas sharing a live store on a local `redis-server` against one
 *   replica: signing cost, `/v1/decide` throughput, feedback round trips,
 *   and the shifted stream (`--requests`, at `--shift-rate`) round-robin
 *   with feedback to another replica.
 *
 * Prints per stream: certified share and disagreement over the second half,
 * audits spent, and every move of the live certificate.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { loadBundle, writeBundleAtomically } from "../src/bundle/files.ts";
import { encodeBundle } from "../src/bundle/codec.ts";
import { assess } from "../src/engine/answer.ts";
import { prepareText } from "../src/engine/prepare.ts";
import { QUIET_GUARD } from "../src/engine/drift.ts";
import { seededRandom } from "../src/engine/random.ts";
import type { Table } from "../src/engine/table.ts";
import { DecisionClient, type ModelAsk } from "../src/client/mod.ts";
import { LiveController } from "../src/live/controller.ts";
import { countFeedback } from "../src/live/feedback.ts";
import { parseFeedback } from "../src/wire/feedback_body.ts";
import { serviceTable } from "../src/wire/service_table.ts";
import { startServe } from "./processes.ts";
import { readTraces } from "../src/traces/mod.ts";
import type { TraceSet } from "../src/traces/types.ts";
import { train } from "../src/train/trainer.ts";
import {
  DEFAULT_TRAIN_OPTIONS,
  type TrainOptions,
} from "../src/train/options.ts";
import { trainedContents } from "../src/train/contents.ts";
import { paraphraseFamilies } from "./proxies.ts";
import { benchFleet } from "./bench_live_fleet.ts";
import { percent } from "../src/format.ts";

const { values } = parseArgs({
  options: {
    data: {
      type: "string",
      default: new URL("../../shared/data/", import.meta.url).pathname,
    },
    requests: { type: "string", default: "40000" },
    "audit-rate": { type: "string", default: "0.02" },
    "shift-rate": { type: "string", default: "0.05" },
    seeds: { type: "string", default: "1" },
    replicas: { type: "string", default: "1" },
    "skip-streams": { type: "boolean", default: false },
    "shifted-only": { type: "boolean", default: false },
    "shift-scope-p": { type: "string", default: "0" },
  },
});
const DATA = values.data.endsWith("/") ? values.data : `${values.data}/`;
const REQUESTS = Number(values.requests);
const SHIFT_SCOPE_P = Number(values["shift-scope-p"]);
if (!(SHIFT_SCOPE_P >= 0 && SHIFT_SCOPE_P < 1)) {
  throw new RangeError(
    `--shift-scope-p must be in [0, 1): got ${values["shift-scope-p"]}`,
  );
}
/**
 * How the shifted stream's table is trained: a plain random split of
 * paraphrase families (near-duplicates on both sides, so its threshold is
 * too lenient), its out-of-scope rule at `--shift-scope-p` (0: off).
 */
const SHIFTED_OPTIONS: Partial<TrainOptions> = {
  split: "random",
  similarity: 1,
  settings: {
    ...DEFAULT_TRAIN_OPTIONS.settings,
    drift: { ...DEFAULT_TRAIN_OPTIONS.settings.drift, scope_p: SHIFT_SCOPE_P },
  },
};

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

/** Trains on `traces` and writes the bundle to `dir`. */
async function trainBundle(
  traces: TraceSet,
  extra: Partial<TrainOptions>,
  dir: string,
): Promise<void> {
  const r = train(traces, { ...DEFAULT_TRAIN_OPTIONS, ...extra });
  await writeBundleAtomically(
    dir,
    await encodeBundle(trainedContents(r)),
  );
}

/** What one replayed stream gave. */
interface StreamResult {
  certifiedShare: number;
  disagreement: number;
  audits: number;
  moves: string[];
  withdrawn: boolean;
}

/** Replays `texts` (with their `labels`) through a server on `bundle` at audit rate `rate`. */
async function replay(
  bundle: string,
  texts: readonly string[],
  labels: readonly string[],
  rate: number,
  seed: number,
): Promise<StreamResult> {
  const server = await startServe(bundle, [
    "--audit-rate",
    String(rate),
    "--audit-seed",
    String(seed),
  ]);
  try {
    let label = "";
    const client = new DecisionClient({
      url: server.base,
      model: (_ask: ModelAsk) => label,
    });
    const half = texts.length >> 1;
    let certified = 0;
    let wrong = 0;
    let audits = 0;
    let last = "";
    const moves: string[] = [];
    let withdrawn = false;
    const look = async (at: number) => {
      const stats = await (await fetch(`${server.base}/v1/stats`)).json();
      const q = Object.values(stats.live.questions)[0] as
        | { threshold: number | null; reason: string; summary: string }
        | undefined;
      if (q === undefined) return;
      const now = `${q.reason} ${q.threshold}`;
      if (now !== last) {
        moves.push(`request ${at}: ${q.summary}`);
        last = now;
      }
      if (q.reason === "withdrawn") withdrawn = true;
    };
    for (let i = 0; i < texts.length; i++) {
      label = labels[i]!;
      const answers = await client.decide(texts[i]!);
      const a = Object.values(answers)[0]!;
      if (a.audited) audits++;
      if (i >= half && a.certified) {
        certified++;
        if (a.table !== label) wrong++;
      }
      if (rate > 0 && (i % 500 === 0 || i === texts.length - 1)) {
        await look(i);
      }
    }
    if (rate > 0) {
      const stats = await (await fetch(`${server.base}/v1/stats`)).json();
      const q = Object.values(stats.live.questions)[0] as
        | { summary: string }
        | undefined;
      if (q !== undefined) moves.push(`at the end: ${q.summary}`);
    }
    const n = texts.length - half;
    return {
      certifiedShare: certified / n,
      disagreement: certified === 0 ? 0 : wrong / certified,
      audits,
      moves,
      withdrawn,
    };
  } finally {
    await server.stop();
  }
}

/** `test.csv` resampled to `n` requests with seed `seed`. */
function resample(
  test: TraceSet,
  n: number,
  seed: number,
): { texts: string[]; labels: string[] } {
  const random = seededRandom(seed);
  const q = test.questions[0]!;
  const texts: string[] = [];
  const labels: string[] = [];
  for (let i = 0; i < n; i++) {
    const at = Math.floor(random() * test.texts.length);
    texts.push(test.texts[at]!);
    labels.push(q.options[q.labels[at]!]!);
  }
  return { texts, labels };
}

/** Feedback bodies over `texts` in batches of `batch` items; audits get fresh ids from `live`. */
/** What a feedback sample answers: an audit, an answer served uncertified lately, or a text not served lately. */
type FeedbackKind = "audits" | "traces" | "traces not served lately";
const FEEDBACK_KINDS: readonly FeedbackKind[] = [
  "audits",
  "traces",
  "traces not served lately",
];

function feedbackBodies(
  table: Table,
  test: TraceSet,
  live: LiveController,
  batch: number,
  kind: FeedbackKind,
): string[] {
  const q = test.questions[0]!;
  const name = table.questions[0]!.name;
  const state = live.stateOf(table);
  const texts = test.texts.slice(0, 2000);
  const bodies: string[] = [];
  for (let start = 0; start < texts.length; start += batch) {
    const items = [];
    for (let i = start; i < Math.min(texts.length, start + batch); i++) {
      const text = texts[i]!;
      let audit: string | undefined;
      if (kind !== "traces not served lately") {
        // Served first, as a proxy does before it asks its model.
        const a = assess(
          table,
          state,
          prepareText(table, state, text),
          name,
          {},
          QUIET_GUARD,
        );
        const ids = live.recordDecisions(table, [a], text);
        if (kind === "audits") audit = ids?.[0];
        // A proxy reports, without an id, only the answers served uncertified.
        if (kind === "traces" && a.answer.certified) continue;
      }
      items.push({
        question: name,
        state: text,
        answer: q.options[q.labels[i]!]!,
        ...(audit === undefined ? {} : { audit }),
      });
    }
    if (items.length > 0) {
      bodies.push(JSON.stringify(batch === 1 ? items[0] : items));
    }
  }
  return bodies;
}

/**
 * Server time per feedback sample, in process, as the route spends it:
 * `JSON.parse`, the body check, counting (an audit: its id looked up; a
 * trace: the assessment recomputed) and the live decision after each
 * request. The last of three rounds is reported (the first ones warm up).
 */
function feedbackCost(table: Table, test: TraceSet): void {
  const served = serviceTable(table);
  for (const batch of [1, 100]) {
    for (const kind of FEEDBACK_KINDS) {
      // Every certified answer audited, or none (so that answers come back
      // without an id).
      const live = new LiveController({
        auditRate: kind === "audits" ? 1 : 1e-9,
        auditSeed: 1,
      });
      live.serve(served.table, served.state);
      let line = "";
      for (let round = 0; round < 3; round++) {
        const bodies = feedbackBodies(table, test, live, batch, kind);
        let samples = 0;
        let counted = 0;
        const start = performance.now();
        for (const body of bodies) {
          const { items } = parseFeedback(JSON.parse(body), served.table);
          const reply = countFeedback(live, served.table, served.peek, items);
          samples += items.length;
          counted += reply.audits + reply.feedback;
        }
        const us = (performance.now() - start) * 1000 / samples;
        line = `  ${kind} in batches of ${String(batch).padEnd(3)}: ${
          us.toFixed(2)
        } us per sample (${samples} samples, ${counted} counted; target <= 10 us)`;
      }
      console.log(line);
    }
  }
}

/**
 * What the feedback check costs per feedback request (the table with its
 * calibration bands against the same table without), and how many
 * feedback items an echoing and a lying proxy need before they are named,
 * on the BANKING77 test texts at audit rate 0.05, in process.
 */
function feedbackCheck(
  table: Table,
  unchecked: Table,
  test: TraceSet,
): void {
  const name = table.questions[0]!.name;
  // A request: one feedback item counted, then the live decision.
  for (
    const [label, t] of [
      ["with the check", table],
      ["without (no bands)", unchecked],
    ] as const
  ) {
    const served = serviceTable(t);
    const live = new LiveController({ auditRate: 1e-9, auditSeed: 1 });
    live.serve(served.table, served.state);
    const certificate = live.certificates(served.table)[0]!;
    // Evidence like the calibration's (each band's answers and
    // disagreements, audited), so no alarm stands and every test runs.
    const bands = table.questions[0]!.calibration.bands!;
    const evidence = certificate.evidence();
    bands.forEach((b, j) => {
      evidence.labelled[j] = b.answers;
      evidence.auditLabelled[j] = b.answers;
      evidence.auditDisagreed[j] = b.disagreements;
      evidence.agreed[j] = b.answers - b.disagreements;
    });
    certificate.restore(evidence);
    let us = 0;
    for (let round = 0; round < 3; round++) {
      const n = 200_000;
      const start = performance.now();
      // The decision after each request is where the check runs.
      for (let i = 0; i < n; i++) certificate.decide();
      us = (performance.now() - start) * 1000 / n;
    }
    console.log(
      `  the live decision after a feedback request, ${label}: ${
        us.toFixed(3)
      } us (alarms ${certificate.policy().alarms})`,
    );
  }
  for (const proxy of ["echo", "liar", "liar-amid-honest"] as const) {
    const served = serviceTable(table);
    const live = new LiveController({ auditRate: 0.05, auditSeed: 1 });
    live.serve(served.table, served.state);
    let items = 0;
    let lies = 0;
    let decisions = 0;
    let named = false;
    for (let i = 0; i < 20_000 && !named; i++) {
      const text = test.texts[i % test.texts.length]!;
      const a = assess(
        served.table,
        served.state,
        prepareText(served.table, served.state, text),
        name,
        {},
        QUIET_GUARD,
      );
      decisions++;
      const ids = live.recordDecisions(served.table, [a], text);
      const audit = ids?.[0];
      const choice = String(a.answer.choice);
      // The echo answers every audit and uncertified answer with the
      // table's choice; the liar answers audits with another option, and
      // amid honest feedback also every uncertified answer with its label
      // (the model's answer here).
      if (proxy === "liar" && audit === undefined) continue;
      if (audit === undefined && a.answer.certified) continue;
      const other = table.questions[0]!.options.find((o) => o !== choice)!;
      const q0 = test.questions[0]!;
      const label = q0.options[q0.labels[i % test.texts.length]!]!;
      countFeedback(live, served.table, served.peek, [{
        question: name,
        text,
        answer: proxy === "echo"
          ? choice
          : audit === undefined && proxy === "liar-amid-honest"
          ? label
          : other,
        audit,
      }]);
      items++;
      if (audit !== undefined && proxy !== "echo") lies++;
      const check = live.states(served.table).get(name)!.feedbackCheck!;
      named = proxy === "echo" ? check.agreesTooMuch : check.disagreesTooMuch;
    }
    const who = proxy === "echo"
      ? "an echoing proxy"
      : proxy === "liar"
      ? "a lying proxy"
      : "a proxy lying on audits, honest on uncertified answers,";
    const where = proxy === "liar-amid-honest" && named
      ? ` (disagreements in: ${
        live.states(served.table).get(name)!.feedbackCheck!.disagreeRegion
      })`
      : "";
    console.log(
      `  ${who} named after ${items} feedback items${
        proxy === "echo" ? "" : `, ${lies} lies`
      } (${decisions} decisions)${named ? "" : ": NOT named"}${where}`,
    );
  }
}

/** wrk on /v1/decide while the bundle is reloaded by SIGHUP. */
async function reloadUnderLoad(bundle: string, work: string): Promise<void> {
  try {
    await new Deno.Command("wrk", {
      args: ["--version"],
      stdout: "null",
      stderr: "null",
    }).output();
  } catch {
    console.log("  skipped: wrk is not installed (apt-get install wrk)");
    return;
  }
  const server = await startServe(bundle, []);
  const script = `${work}/decide.lua`;
  await Deno.writeTextFile(
    script,
    `wrk.method = "POST"\nwrk.body = '{"state": "my card has not arrived yet"}'\nwrk.headers["Content-Type"] = "application/json"\n`,
  );
  try {
    const run = new Deno.Command("wrk", {
      args: ["-t1", "-c16", "-d8s", "-s", script, `${server.base}/v1/decide`],
      stdout: "piped",
      stderr: "piped",
    }).output();
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 2000));
      server.child.kill("SIGHUP");
    }
    const out = await run;
    const raw = new TextDecoder().decode(out.stdout);
    const requests = Number(raw.match(/(\d+) requests in/)?.[1] ?? NaN);
    const non2xx = Number(
      raw.match(/Non-2xx or 3xx responses:\s+(\d+)/)?.[1] ?? 0,
    );
    const errors = raw.match(/Socket errors:.*/)?.[0] ?? "no socket errors";
    const reloads = (server.stderr().match(/reloaded bundle/g) ?? []).length;
    console.log(
      `  ${requests} requests over 8 s with 16 connections, ${reloads} reloads: ${non2xx} non-2xx, ${errors}`,
    );
  } finally {
    await server.stop();
  }
}

if (!(await exists(`${DATA}banking77/train.csv`))) {
  console.log(
    `skipped: no BANKING77 data at ${DATA}banking77/ (pass --data DIR)`,
  );
  Deno.exit(0);
}
const work = await Deno.makeTempDir({ prefix: "dtable-bench-live-" });
try {
  const bankTrain = await readTraces([`${DATA}banking77/train.csv`]);
  const bankTest = await readTraces([`${DATA}banking77/test.csv`]);
  const plain = `${work}/banking77`;
  const shifted = `${work}/families`;
  let t0 = performance.now();
  await trainBundle(bankTrain, {}, plain);
  console.log(
    `trained the BANKING77 table in ${
      ((performance.now() - t0) / 1000).toFixed(0)
    } s`,
  );
  const plainTable = await loadBundle(plain);

  const replicas = Number(values.replicas);
  if (!(Number.isInteger(replicas) && replicas >= 1)) {
    throw new RangeError(`--replicas must be a positive integer`);
  }
  if (replicas > 1) {
    t0 = performance.now();
    await trainBundle(paraphraseFamilies(bankTrain), SHIFTED_OPTIONS, shifted);
    console.log(
      `trained the paraphrase-family table in ${
        ((performance.now() - t0) / 1000).toFixed(0)
      } s`,
    );
    const { texts, labels } = resample(bankTest, REQUESTS, 101);
    await benchFleet({
      replicas,
      plain,
      shifted,
      texts,
      labels,
      auditRate: Number(values["shift-rate"]),
      alpha: plainTable.questions[0]!.calibration.alpha,
      work,
    });
  } else if (!values["shifted-only"]) {
    console.log("\n== Feedback cost (server time per sample, in process)");
    feedbackCost(plainTable, bankTest);
    console.log("  the same without the feedback check (no bands):");
    // The same bundle loaded again, its bands dropped: a bundle trained
    // before the feedback check.
    const unchecked = await loadBundle(plain);
    for (const q of unchecked.questions) delete q.calibration.bands;
    feedbackCost(unchecked, bankTest);

    console.log(
      "\n== The feedback check (cost per request; items an echo and a liar need)",
    );
    feedbackCheck(plainTable, unchecked, bankTest);

    console.log("\n== Reload under load");
    await reloadUnderLoad(plain, work);
  }

  if (replicas === 1 && !values["skip-streams"]) {
    t0 = performance.now();
    await trainBundle(paraphraseFamilies(bankTrain), SHIFTED_OPTIONS, shifted);
    console.log(
      `\ntrained the paraphrase-family table in ${
        ((performance.now() - t0) / 1000).toFixed(0)
      } s`,
    );
    const shiftedCal = (await loadBundle(shifted)).questions[0]!.calibration;
    console.log(
      `  its threshold: ${
        shiftedCal.threshold?.toFixed(3)
      } (${shiftedCal.status}; ${shiftedCal.candidates.length} live candidates); out-of-scope level ${SHIFT_SCOPE_P}${
        SHIFT_SCOPE_P === 0 ? " (off)" : ""
      }`,
    );
    const alpha = plainTable.questions[0]!.calibration.alpha;
    const delta = plainTable.questions[0]!.calibration.delta;
    const rate = Number(values["audit-rate"]);
    const shiftRate = Number(values["shift-rate"]);
    const seeds = Number(values.seeds);

    if (!values["shifted-only"]) {
      console.log(
        `\n== Exchangeable stream: BANKING77 test.csv resampled to ${REQUESTS} requests (alpha ${alpha}, delta ${delta})`,
      );
      let withdrawals = 0;
      for (let seed = 1; seed <= seeds; seed++) {
        const { texts, labels } = resample(bankTest, REQUESTS, seed);
        const base = await replay(plain, texts, labels, 0, seed);
        const live = await replay(plain, texts, labels, rate, seed);
        if (live.withdrawn) withdrawals++;
        console.log(
          `  seed ${seed}: second half certified ${
            percent(live.certifiedShare)
          } with audits at R = ${rate} vs ${
            percent(base.certifiedShare)
          } without (difference ${
            ((live.certifiedShare - base.certifiedShare) * 100).toFixed(2)
          } points; target within 1), disagreement ${
            percent(live.disagreement)
          } vs ${percent(base.disagreement)}; ${live.audits} audits; ${
            live.withdrawn ? "WITHDRAWN" : "never withdrawn"
          }`,
        );
        for (const m of live.moves) console.log(`    ${m}`);
      }
      console.log(
        `  withdrawn in ${withdrawals} of ${seeds} seeds (target: at most ${
          delta * 100
        }% of seeds)`,
      );
    }

    console.log(
      `\n== Shifted stream: paraphrase-family table (random split), BANKING77 test.csv resampled to ${REQUESTS} requests`,
    );
    for (let seed = 1; seed <= seeds; seed++) {
      const { texts, labels } = resample(bankTest, REQUESTS, 100 + seed);
      const base = await replay(shifted, texts, labels, 0, seed);
      const live = await replay(shifted, texts, labels, shiftRate, seed);
      console.log(
        `  seed ${seed}: without audits: second half certified ${
          percent(base.certifiedShare)
        } at ${percent(base.disagreement)} disagreement`,
      );
      console.log(
        `  seed ${seed}: with audits at R = ${shiftRate}: second half certified ${
          percent(live.certifiedShare)
        } at ${percent(live.disagreement)} disagreement (targets: <= ${
          percent(alpha)
        } and >= 70% certified); ${live.audits} audits`,
      );
      for (const m of live.moves) console.log(`    ${m}`);
    }
  }
} finally {
  await Deno.remove(work, { recursive: true }).catch(() => {});
}
