/**
 * `deno task bench:cold`: a learning service from nothing. BANKING77's
 * `train.csv` is streamed once, in a seeded order, to `serve --learn DIR`
 * started on an empty folder, through a simulated proxy whose model answers
 * each text's label: it asks the model for every uncertified answer and
 * every audit, and sends the answer back with the id the service gave.
 * The texts of 8 options (about a tenth) are held back until the second
 * half, as a product arriving. Per 1,000 requests it prints the certified
 * share, the disagreement among certified answers, the model calls and the
 * retrains; then the bundles in force at 4,000 and 10,000 requests and at
 * the end on `test.csv`, beside bundles trained in one batch on the first N
 * texts with every label (the same options, the same seed), and on the
 * labels of those texts the learner was given (the model's answers to what
 * it asked, the audits included): what one batch makes of the same labels.
 *
 * Runs the default settings and `--semantic off` (`--semantic MODE` runs
 * one); `--rate N` requests a second (50 by default), `--limit N` streams
 * only the first N texts, `--repeat N` streams them N times (the second time
 * round the texts are not new, but the labels are: `--repeat 2` gives 20,000
 * labels), `--held N` holds back N options (0: none), `--no-batch` skips
 * the batch bundles, `--learn-log` prints what the learner logged and
 * `--fake-option N` sends, every N requests, a label naming an option
 * nobody answers (`zz_fake_option`): an extra item without an id, or with
 * `--fake-with-id` the label of that request's uncertified answer under its
 * own id (the issue-43 check: it must neither hold the question nor cost
 * more than 5 points of certified share). `--restart-at N` stops the server with SIGTERM after request N and
 * starts it again on the same folder (printing what it resumed). It
 * also measures what a retrain costs serving: the `latency_us`
 * of certified answers while a retrain runs and while none does (p50, p99),
 * and the server's resident memory at its highest (sampled every second,
 * retrain workers included).
 *
 * ```sh
 * deno task bench:cold [--semantic auto|off|both] [--rate 50] [--limit N] [--repeat N]
 *   [--held 8] [--no-batch] [--learn-log] [--restart-at N] [--no-curve] [--fresh-batch]
 *   [--fake-option N [--fake-with-id]]
 * ```
 *
 * @module
 */

import { parseArgs } from "node:util";
import { loadBundle } from "../src/bundle/mod.ts";
import { evaluate } from "../src/eval/mod.ts";
import { readTraces, type TraceSet } from "../src/traces/mod.ts";
import { trainBundle } from "../src/train/mod.ts";
import { embedTraces } from "../src/train/embed.ts";
import { DATA, EMBED_CACHE_OPTION, exitWithoutData } from "./bench_data.ts";
import { rssMbOrNull, startServe } from "./processes.ts";
import { batchCurve, firstReaching } from "./bench_cold_batch.ts";
import { type Item, post, streamOf } from "./bench_stream.ts";

const { values } = parseArgs({
  options: {
    semantic: { type: "string", default: "both" },
    rate: { type: "string", default: "50" },
    limit: { type: "string" },
    repeat: { type: "string", default: "1" },
    seed: { type: "string", default: "1" },
    held: { type: "string", default: "8" },
    "no-batch": { type: "boolean", default: false },
    "no-curve": { type: "boolean", default: false },
    "fresh-batch": { type: "boolean", default: false },
    "batch-cache": {
      type: "string",
      default: `${
        Deno.env.get("TMPDIR") ?? "/tmp"
      }/dtable-bench-cold-batch.json`,
    },
    "learn-log": { type: "boolean", default: false },
    "restart-at": { type: "string" },
    "fake-option": { type: "string" },
    "fake-with-id": { type: "boolean", default: false },
    "embed-cache": EMBED_CACHE_OPTION,
  },
});

await exitWithoutData();

/** `--fake-option N`: a stray label naming this option every N requests (0: none). */
const fakeEvery = Number(values["fake-option"] ?? 0);
const FAKE_OPTION = "zz_fake_option";

const SEED = Number(values.seed);
const RATE = Number(values.rate);
const CHECKPOINTS = [4000, 10000];

interface Window {
  end: number;
  certified: number;
  wrong: number;
  calls: number;
  retrains: number;
  newCertified: number;
  newSeen: number;
  newWrong: number;
}

interface RunResult {
  /** Table-certified answers' latency_us while a retrain (or embedding ahead) ran, and while none did. */
  busy: number[];
  idle: number[];
  /** Highest resident memory of the server, MB. */
  peakMb: number;
  windows: Window[];
  snapshots: Map<number, string>;
  final: string | null;
  retrains: number;
  seconds: number;
  /** Per request, whether the proxy asked the model (the learner got its label). */
  asked: boolean[];
  /** Seconds the learner took to become idle after the stream. */
  idleAfter: number;
}

/** Streams `items` through a learning service with `semantic` mode; a simulated proxy answers. */
async function run(
  items: Item[],
  semantic: string,
  lateOptions: Set<string>,
): Promise<RunResult> {
  const dir = await Deno.makeTempDir({ prefix: "dtable-cold-" });
  const startLearner = () =>
    startServe(null, ["--learn", dir, "--semantic", semantic], {
      permissions: [
        "--allow-net=127.0.0.1",
        "--allow-read",
        `--allow-write=${dir}`,
        "--allow-env",
      ],
    });
  let server = await startLearner();
  /** What the servers stopped before this one said on stderr. */
  let stoppedStderr = "";
  const restartAt = values["restart-at"] === undefined
    ? -1
    : Number(values["restart-at"]);
  const started = performance.now();
  const wallStarted = Date.now();
  const windows: Window[] = [];
  const snapshots = new Map<number, string>();
  const busy: number[] = [];
  const idle: number[] = [];
  let peakMb = 0;
  let running = false;
  let watching = true;
  const watch = (async () => {
    while (watching) {
      try {
        const s = await (await fetch(`${server.base}/v1/stats`)).json();
        running = s.learn?.running === true;
      } catch { /* the server is stopping */ }
      const mb = await rssMbOrNull(server.child.pid);
      if (mb !== null) peakMb = Math.max(peakMb, mb);
      await new Promise((r) => setTimeout(r, 1000));
    }
  })();
  let w: Window = blank(0);
  const retrainsSoFar = () =>
    ((stoppedStderr + server.stderr()).match(/^learn: retrained/gm) ?? [])
      .length;
  let retrainsBefore = 0;
  const asked: boolean[] = [];
  let idleAfter = 0;
  try {
    for (let i = 0; i < items.length; i++) {
      const due = started + (i * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const item = items[i]!;
      const reply = await post(server.base, "/v1/decide", {
        state: item.text,
        questions: { category: {} },
      });
      const a = reply.answers.category;
      const isNew = lateOptions.has(item.label);
      if (isNew) w.newSeen++;
      if (a.certified) {
        // The table's certified answers (the second tier's wait for the encoder).
        if (a.tier !== "semantic") {
          (running ? busy : idle).push(reply.latency_us);
        }
        w.certified++;
        if (a.choice !== item.label) w.wrong++;
        if (isNew) w.newCertified++;
        if (isNew && a.choice !== item.label) w.newWrong++;
      }
      asked.push(!a.certified || a.audit !== undefined);
      // A stray label naming an option nobody answers, every N requests:
      // an extra item without an id, or (--fake-with-id) the label of an
      // uncertified answer under its own id.
      const fake = fakeEvery > 0 && (i + 1) % fakeEvery === 0;
      if (fake && !values["fake-with-id"]) {
        await post(server.base, "/v1/feedback", {
          question: "category",
          state: item.text,
          answer: FAKE_OPTION,
        });
      }
      if (!a.certified || a.audit !== undefined) {
        w.calls++;
        await post(server.base, "/v1/feedback", {
          question: "category",
          state: item.text,
          answer: fake && values["fake-with-id"] && a.feedback_id !== undefined
            ? FAKE_OPTION
            : item.label,
          ...(a.audit !== undefined ? { audit: a.audit } : {}),
          ...(a.feedback_id !== undefined
            ? { feedback_id: a.feedback_id }
            : {}),
        });
      }
      const n = i + 1;
      if (n % 1000 === 0 || n === items.length) {
        const retrains = retrainsSoFar();
        w.retrains = retrains - retrainsBefore;
        retrainsBefore = retrains;
        w.end = n;
        windows.push(w);
        printWindow(semantic, w, n - (windows.at(-2)?.end ?? 0));
        w = blank(n);
      }
      if (CHECKPOINTS.includes(n)) {
        const target = await inForce(dir);
        if (target !== null) snapshots.set(n, target);
      }
      if (n === restartAt) {
        // SIGTERM, and a start on the same folder: what it resumes.
        const before = await learnerFigures(server.base);
        await server.stop();
        stoppedStderr += server.stderr();
        server = await startLearner();
        const after = await learnerFigures(server.base);
        console.log(
          `${semantic} restarted at request ${n}: labels ${before.labels} -> ${after.labels}, live audits ${before.audits} -> ${after.audits}, retrains ${before.retrains} -> ${after.retrains}, next retrain at ${before.next} -> ${after.next}`,
        );
      }
    }
    // The bundle in force once the learner is idle: no retrain running,
    // and none since the labels last came (it retrains once more on the
    // labels that were too fresh when the last one began).
    const quietSince = performance.now();
    let idleFor = 0;
    while (performance.now() - quietSince < 240_000 && idleFor < 15) {
      await new Promise((r) => setTimeout(r, 1000));
      idleFor = running ? 0 : idleFor + 1;
    }
    idleAfter = (performance.now() - quietSince) / 1000;
  } finally {
    watching = false;
    await watch;
    await server.stop();
  }
  if (values["learn-log"]) {
    // What the learner said, as it said it (holds, retrains, swaps).
    for (const line of server.stderr().split("\n")) {
      if (line.startsWith("learn:")) console.log(`  ${semantic} ${line}`);
    }
  }
  const history = await Deno.readTextFile(`${dir}/retrains.jsonl`).catch(() =>
    ""
  );
  const refused: Record<string, number> = {};
  let servedYet = false;
  for (const line of history.trim().split("\n").filter((l) => l !== "")) {
    const h = JSON.parse(line);
    // The request being answered when the pass ended.
    const at = Math.round(
      ((Date.parse(h.ended) - wallStarted) / 1000) * RATE,
    );
    const failures = Object.entries(h.failures ?? {}).map(([q, why]) =>
      `${q} ${why}`
    );
    console.log(
      `  ${semantic} retrain ${h.retrain ?? "?"}${
        h.encoder ? " (encoder)" : ""
      } on ${h.labels} labels, ended near request ${at}, ${
        h.seconds.toFixed(1)
      } s: ${h.swapped ? "swapped in" : "kept"}${
        failures.length > 0 ? ` [${failures.join(", ")}]` : ""
      }${
        Object.keys(h.tested ?? {}).length > 0
          ? ` tested at ${
            Object.values(h.tested).map((l) => (l as number).toPrecision(2))
              .join(", ")
          }`
          : ""
      } (${h.reason})`,
    );
    if (servedYet && !h.swapped && h.calibrated === 0) {
      for (const why of Object.values(h.failures ?? { none: "unknown" })) {
        refused[why as string] = (refused[why as string] ?? 0) + 1;
      }
    }
    servedYet ||= h.swapped;
  }
  console.log(
    `  ${semantic} passes refused for want of calibration while a bundle served: ${
      Object.entries(refused).map(([k, v]) => `${v} ${k}`).join(", ") || "none"
    }`,
  );
  return {
    busy,
    idle,
    peakMb,
    windows,
    snapshots,
    final: await inForce(dir),
    retrains: retrainsSoFar(),
    seconds: (performance.now() - started) / 1000 - idleAfter,
    idleAfter,
    asked,
  };
}

/** A learning server's labels, audits (over its questions), retrains and next retrain, from `/v1/stats`. */
async function learnerFigures(base: string) {
  const s = await (await fetch(`${base}/v1/stats`)).json();
  const questions = Object.values(s.live?.questions ?? {}) as {
    audited?: number;
  }[];
  return {
    labels: s.learn?.labels ?? 0,
    audits: questions.reduce((a, q) => a + (q.audited ?? 0), 0),
    retrains: s.learn?.retrains ?? 0,
    next: s.learn?.next_retrain_at ?? 0,
  };
}

function blank(end: number): Window {
  return {
    end,
    certified: 0,
    wrong: 0,
    calls: 0,
    retrains: 0,
    newCertified: 0,
    newSeen: 0,
    newWrong: 0,
  };
}

/** A copy of the bundle in force in `dir` now (its files), or null when there is none. */
async function inForce(dir: string): Promise<string | null> {
  let from: string;
  try {
    from = await Deno.realPath(`${dir}/bundle`);
  } catch {
    return null;
  }
  const to = await Deno.makeTempDir({ prefix: "dtable-cold-bundle-" });
  for await (const e of Deno.readDir(from)) {
    if (e.isFile) await Deno.copyFile(`${from}/${e.name}`, `${to}/${e.name}`);
  }
  return to;
}

const pct = (a: number, b: number) =>
  b === 0 ? "   -  " : `${(100 * a / b).toFixed(1).padStart(5)}%`;

function printWindow(semantic: string, w: Window, size: number): void {
  console.log(
    `${semantic.padEnd(4)} requests ${String(w.end).padStart(6)}: certified ${
      pct(w.certified, size)
    }, disagreeing ${pct(w.wrong, w.certified)} of them, model calls ${
      pct(w.calls, size)
    }, retrains ${w.retrains}${
      w.newSeen > 0
        ? `; held-back options ${w.newSeen} seen, ${
          pct(w.newCertified, w.newSeen)
        } certified at ${pct(w.newWrong, w.newCertified)}`
        : ""
    }`,
  );
}

/**
 * Certified share and disagreement of `bundle` on `test` (both tiers with
 * embeddings), and on the test texts of the options it has learned (a
 * learning service holds the others: see docs/live.md).
 */
async function onTest(
  bundle: string,
  test: TraceSet,
  embeddings: Float32Array[] | undefined,
): Promise<string> {
  const table = await loadBundle(bundle);
  const tiered = table.questions.some((q) => q.semantic !== undefined);
  const q = table.byName.get("category");
  if (q === undefined) return "no category question";
  const figures = (rows: number[]) => {
    const part: TraceSet = {
      texts: rows.map((i) => test.texts[i]!),
      questions: test.questions.map((t) => ({
        ...t,
        labels: Int32Array.from(rows, (i) => t.labels[i]!),
      })),
      times: null,
      groups: null,
      groupNames: [],
    };
    const f = evaluate(
      table,
      part,
      false,
      undefined,
      tiered ? rows.map((i) => embeddings![i]!) : undefined,
    ).questions.category!;
    return `${pct(f.certified, f.n)} certified at ${
      pct(f.disagreements, f.certified)
    }`;
  };
  const all = test.texts.map((_, i) => i);
  const t = test.questions[0]!;
  const learned = all.filter((i) =>
    q.optionIndex.has(t.options[t.labels[i]!]!)
  );
  return learned.length === all.length
    ? figures(all)
    : `${figures(all)} (${
      figures(learned)
    } of the ${learned.length} texts of its ${q.options.length} options)`;
}

const train = await readTraces([`${DATA}banking77/train.csv`]);
const test = await readTraces([`${DATA}banking77/test.csv`]);
let items = streamOf(train, Number(values.held), SEED);
const q = train.questions[0]!;
const late = new Set(
  items.slice(Math.floor(items.length / 2)).map((x) => x.label).filter((l) =>
    !items.slice(0, Math.floor(items.length / 2)).some((x) => x.label === l)
  ),
);
if (values.limit !== undefined) items = items.slice(0, Number(values.limit));
items = new Array(Number(values.repeat)).fill(items).flat();
console.log(
  `BANKING77 train.csv: ${items.length} texts streamed at ${RATE}/s (seed ${SEED}), ${late.size} of ${q.options.length} options held back until the second half`,
);
const modes = values.semantic === "both" ? ["auto", "off"] : [values.semantic];
const testEmbeddings = modes.includes("off") && modes.length === 1
  ? undefined
  : await embedTraces(test.texts, values["embed-cache"], 2);

for (const mode of modes) {
  const r = await run(items, mode, late);
  const all = r.windows.reduce(
    (a, w) => ({
      certified: a.certified + w.certified,
      wrong: a.wrong + w.wrong,
      calls: a.calls + w.calls,
    }),
    { certified: 0, wrong: 0, calls: 0 },
  );
  const worst = Math.max(
    ...r.windows.map((w) => w.certified === 0 ? 0 : w.wrong / w.certified),
  );
  console.log(
    `${mode}: the whole stream: certified ${
      pct(all.certified, items.length)
    } at ${pct(all.wrong, all.certified)} (worst window ${
      (100 * worst).toFixed(1)
    }%), model calls ${pct(all.calls, items.length)}, ${r.retrains} retrains, ${
      r.seconds.toFixed(0)
    } s`,
  );
  const quantile = (xs: number[], q: number) => {
    const sorted = [...xs].sort((a, b) => a - b);
    return sorted.length === 0
      ? "-"
      : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
        .toFixed(1);
  };
  console.log(
    `${mode}: table-certified answers' latency_us while a retrain or embedding ran (${r.busy.length}): p50 ${
      quantile(r.busy, 0.5)
    }, p99 ${quantile(r.busy, 0.99)}; while none ran (${r.idle.length}): p50 ${
      quantile(r.idle, 0.5)
    }, p99 ${quantile(r.idle, 0.99)}; the server's resident memory at most ${
      r.peakMb.toFixed(0)
    } MB`,
  );
  if (!values["no-curve"]) await printCurve(mode, r, items);
  for (const [n, bundle] of [...r.snapshots, ["end", r.final] as const]) {
    if (bundle === null) continue;
    let line = `${mode}: bundle in force at ${
      n === "end" ? "the end (the learner idle)" : n
    } on test.csv: ${await onTest(
      bundle,
      test,
      testEmbeddings,
    )}`;
    if (!values["no-batch"] && typeof n === "number") {
      const batch = await batchBundle(items.slice(0, n), mode);
      line += `; trained in one batch on the first ${n}: ${
        batch === null ? "refused" : await onTest(batch, test, testEmbeddings)
      }`;
      const given = items.slice(0, n).filter((_, i) => r.asked[i]);
      const same = await batchBundle(given, mode);
      line += `; in one batch on the ${given.length} labels the learner got: ${
        same === null ? "refused" : await onTest(same, test, testEmbeddings)
      }`;
    }
    console.log(line);
  }
}

/**
 * The learner beside the batch curve: per window, its certified share and
 * that of a bundle trained in one batch on every text before the window,
 * and the first window at which each reaches 50, 65 and 80%.
 */
async function printCurve(mode: string, r: RunResult, items: Item[]) {
  const ends = r.windows.map((w) => w.end);
  const batch = await batchCurve(items, ends, {
    semantic: mode,
    seed: SEED,
    key: `seed ${SEED} held ${values.held} limit ${
      values.limit ?? "all"
    } repeat ${values.repeat}`,
    cachePath: values["batch-cache"],
    fresh: values["fresh-batch"],
    embedCache: values["embed-cache"],
    note: (line) => console.log(`  ${line}`),
  });
  console.log(
    `${mode}: per window, certified (disagreeing) by the learner | by one batch on every text before the window | points behind`,
  );
  const learner: number[] = [];
  const batchShares: number[] = [];
  let start = 0;
  r.windows.forEach((w, i) => {
    const size = w.end - start;
    const b = batch[i]!;
    learner.push(w.certified / size);
    batchShares.push(b.certified / b.n);
    console.log(
      `  to ${String(w.end).padStart(6)}: ${pct(w.certified, size)} (${
        pct(w.wrong, w.certified)
      }) | ${pct(b.certified, b.n)} (${pct(b.wrong, b.certified)}) | ${
        (100 * (b.certified / b.n - w.certified / size)).toFixed(1).padStart(5)
      }`,
    );
    start = w.end;
  });
  const levels = [0.5, 0.65, 0.8];
  const at = (xs: (number | null)[]) =>
    xs.map((x, i) => `${100 * levels[i]!}% ${x === null ? "never" : `at ${x}`}`)
      .join(", ");
  console.log(
    `${mode}: first window reaching: learner ${
      at(firstReaching(ends, learner, levels))
    }; batch ${at(firstReaching(ends, batchShares, levels))}`,
  );
}

/** A bundle trained in one batch on `items` with every label, written to a temporary folder. */
async function batchBundle(
  items: Item[],
  semantic: string,
): Promise<string | null> {
  const jsonl = items.map((x) =>
    JSON.stringify({ text: x.text, answers: { category: x.label } })
  ).join("\n");
  const { parseJsonlTraces } = await import("../src/traces/mod.ts");
  const traces = parseJsonlTraces("batch.jsonl", jsonl);
  const trained = await trainBundle({
    training: { semantic: semantic as "auto" | "off", seed: SEED, workers: 2 },
    embedCache: values["embed-cache"],
    allowUncalibrated: true,
  }, traces);
  const dir = await Deno.makeTempDir({ prefix: "dtable-batch-" });
  const { writeTrainedBundle } = await import("../src/train/mod.ts");
  await writeTrainedBundle(`${dir}/bundle`, trained, 1);
  return `${dir}/bundle`;
}
