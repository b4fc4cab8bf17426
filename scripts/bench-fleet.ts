/**
 * `deno task bench:fleet`: a fleet that learns from nothing, beside
 * one learner given the same stream, in one run. BANKING77's `train.csv`
 * (the `bench:cold` stream: seeded order, 8 options held back until the
 * second half) goes at 50 requests a second to:
 *
 * - one `serve --learn DIR` (`--no-single` skips it), then
 * - N replicas (3 by default) of `serve --learn DIR_i --live-store URL`, each
 *   on its own folder, sharing a local `redis-server`, behind nginx
 *   (`deploy/nginx.conf`, round robin; `--direct`: decisions to the
 *   replicas in turn and each label to the next replica).
 *
 * A simulated proxy answers every uncertified answer and audit with the
 * text's label, under the id the service gave. At `--kill-at N` (half the
 * stream by default; 0: never) the fleet's learner is killed with SIGKILL;
 * with `--store-down-at N` the store is stopped for `--store-down-s` seconds
 * (30) and started again on its data. It prints per window (1,000
 * requests) the certified share and the disagreement among certified
 * answers of each, and the fleet's learner; then the seconds until another
 * replica learned, the labels the proxy got a 2xx for against the labels
 * in each survivor's folder and its learner's count, the retrains of each
 * lease, the bundle ids of the survivors, the most seconds any replica
 * lagged a new bundle id (each replica's `/v1/health` every 250 ms), and
 * per replica the picks its decisions gave and how many were answered.
 *
 * ```sh
 * deno task bench:fleet [--replicas 3] [--rate 50] [--limit N] [--kill-at N]
 *   [--store-down-at N] [--store-down-s 30] [--direct] [--no-single] [--held 8] [--seed 1]
 * ```
 *
 * @module
 */

import { parseArgs } from "node:util";
import { readTraces } from "../src/traces/mod.ts";
import { DATA, exitWithoutData } from "./bench_data.ts";
import { type Item, post, streamOf } from "./bench_stream.ts";
import {
  freePort,
  hasCommand,
  type ServeProcess,
  startNginx,
  startRedis,
  startServe,
} from "./processes.ts";
import { percent } from "../src/format.ts";

const { values } = parseArgs({
  options: {
    replicas: { type: "string", default: "3" },
    rate: { type: "string", default: "50" },
    limit: { type: "string" },
    "kill-at": { type: "string" },
    "store-down-at": { type: "string" },
    "store-down-s": { type: "string", default: "30" },
    direct: { type: "boolean", default: false },
    "no-single": { type: "boolean", default: false },
    held: { type: "string", default: "8" },
    seed: { type: "string", default: "1" },
    window: { type: "string", default: "1000" },
  },
});

await exitWithoutData();
if (!(await hasCommand("redis-server"))) {
  console.log("skipped: no redis-server (apt-get install redis-server)");
  Deno.exit(0);
}
const viaNginx = !values.direct && (await hasCommand("nginx"));

const RATE = Number(values.rate);
const WINDOW = Number(values.window);
const REPLICAS = Number(values.replicas);

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

interface Window {
  end: number;
  requests: number;
  certified: number;
  wrong: number;
  learner: string;
}

async function getJson(url: string): Promise<Json | null> {
  try {
    const r = await fetch(url);
    return r.ok ? await r.json() : (await r.body?.cancel(), null);
  } catch {
    return null;
  }
}

const PERMS = (dir: string) => [
  "--allow-net=127.0.0.1",
  "--allow-read",
  `--allow-write=${dir}`,
  "--allow-env",
];

/** Labelled lines of a learning folder's log (the rotated file included). */
async function labelLines(dir: string): Promise<number> {
  let n = 0;
  for (const name of ["feedback.1.jsonl", "feedback.jsonl"]) {
    const text = await Deno.readTextFile(`${dir}/${name}`).catch(() => "");
    for (const line of text.split("\n")) if (line.startsWith('{"text"')) n++;
  }
  return n;
}

/** Streams `items`; `to(i)` says where request i goes and `feedbackTo(i)` where its label goes. */
async function stream(
  items: Item[],
  to: (i: number) => string,
  feedbackTo: (i: number) => string,
  learnerName: () => string,
  at: (n: number) => Promise<void>,
) {
  const windows: Window[] = [];
  let w: Window = blank(0);
  let acknowledged = 0;
  let failed = 0;
  const started = performance.now();
  for (let i = 0; i < items.length; i++) {
    const wait = started + (i * 1000) / RATE - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const item = items[i]!;
    let reply: Json;
    try {
      reply = await post(to(i), "/v1/decide", {
        state: item.text,
        questions: { category: {} },
      });
    } catch {
      failed++;
      continue;
    }
    const a = reply.answers.category;
    w.requests++;
    if (a.certified) {
      w.certified++;
      if (a.choice !== item.label) w.wrong++;
    }
    if (!a.certified || a.audit !== undefined) {
      try {
        const r = await post(feedbackTo(i), "/v1/feedback", {
          question: "category",
          state: item.text,
          answer: item.label,
          ...(a.audit !== undefined ? { audit: a.audit } : {}),
          ...(a.feedback_id !== undefined
            ? { feedback_id: a.feedback_id }
            : {}),
        });
        acknowledged += r.kept ?? 0;
      } catch {
        failed++;
      }
    }
    const n = i + 1;
    if (n % WINDOW === 0 || n === items.length) {
      w.end = n;
      w.learner = learnerName();
      windows.push(w);
      w = blank(n);
    }
    await at(n);
  }
  return { windows, acknowledged, failed };
}

function blank(end: number): Window {
  return { end, requests: 0, certified: 0, wrong: 0, learner: "" };
}

/** Waits until `busy()` has been false for 15 s in a row (at most 240 s). */
async function settle(busy: () => Promise<boolean>): Promise<void> {
  const end = performance.now() + 240_000;
  let quiet = 0;
  while (performance.now() < end && quiet < 15) {
    await new Promise((r) => setTimeout(r, 1000));
    quiet = (await busy()) ? 0 : quiet + 1;
  }
}

/** The passes of a learning folder's history, in words: labels, seconds, swapped. */
async function passes(dir: string): Promise<string> {
  const text = await Deno.readTextFile(`${dir}/retrains.jsonl`).catch(() => "");
  return text.split("\n").filter((l) => l !== "").map((l) => {
    const h = JSON.parse(l);
    return `${h.labels}${h.swapped ? "*" : ""} (${
      Number(h.seconds).toFixed(0)
    } s)`;
  }).join(", ");
}

async function single(
  items: Item[],
): Promise<{ windows: Window[]; passes: string }> {
  const dir = await Deno.makeTempDir({ prefix: "dtable-fleet-single-" });
  const server = await startServe(null, [
    "--learn",
    dir,
    "--semantic",
    "off",
  ], { permissions: PERMS(dir) });
  try {
    const r = await stream(
      items,
      () => server.base,
      () => server.base,
      () => "alone",
      async () => {},
    );
    await settle(async () => {
      const s = await getJson(`${server.base}/v1/stats`);
      return s?.learn?.running === true;
    });
    return { windows: r.windows, passes: await passes(dir) };
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

async function fleet(items: Item[]) {
  const root = await Deno.makeTempDir({ prefix: "dtable-fleet-learn-" });
  const redisPort = freePort();
  await Deno.mkdir(`${root}/redis`);
  let redis = await startRedis(redisPort, `${root}/redis`);
  const dirs = Array.from({ length: REPLICAS }, (_, i) => `${root}/r${i + 1}`);
  for (const d of dirs) await Deno.mkdir(d);
  const start = (i: number) =>
    startServe(null, [
      "--learn",
      dirs[i]!,
      "--semantic",
      "off",
      "--live-store",
      redis.url,
      "--replica",
      `r${i + 1}`,
    ], { permissions: PERMS(dirs[i]!) });
  const replicas: (ServeProcess | null)[] = [];
  for (let i = 0; i < REPLICAS; i++) replicas.push(await start(i));
  const nginx = viaNginx
    ? await startNginx(root, replicas.map((r) => r!.port))
    : null;
  const alive = () => replicas.filter((r): r is ServeProcess => r !== null);
  const learnerOf = async (): Promise<string> => {
    for (const r of alive()) {
      const s = await getJson(`${r.base}/v1/stats`);
      if (s?.learn?.learner === true) return s.learn.fleet.replica;
    }
    return "none";
  };
  let learnerNow = "none";
  // Who learns, every second; each replica's bundle id every 250 ms.
  let watching = true;
  const firstSeen = new Map<string, number>();
  const lags: number[] = [];
  const lastId: (string | null)[] = replicas.map(() => null);
  const pending = new Map<string, { at: number; have: Set<number> }>();
  const watch = (async () => {
    let tick = 0;
    while (watching) {
      if (tick++ % 4 === 0) learnerNow = await learnerOf();
      const now = performance.now();
      await Promise.all(replicas.map(async (r, i) => {
        if (r === null) return;
        const h = await getJson(`${r.base}/v1/health`);
        const id = h?.bundle_id as string | undefined;
        if (id === undefined || id === lastId[i]) return;
        lastId[i] = id;
        if (!firstSeen.has(id)) {
          firstSeen.set(id, now);
          pending.set(id, { at: now, have: new Set() });
        }
        const p = pending.get(id);
        if (p === undefined) return;
        p.have.add(i);
        const live = replicas.map((r, j) => r === null ? -1 : j).filter((j) =>
          j >= 0
        );
        if (live.every((j) => p.have.has(j))) {
          lags.push((now - p.at) / 1000);
          pending.delete(id);
        }
      }));
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  const killAt = values["kill-at"] === undefined
    ? Math.floor(items.length / 2)
    : Number(values["kill-at"]);
  const downAt = Number(values["store-down-at"] ?? 0);
  const downS = Number(values["store-down-s"]);
  let killedAt = -1;
  let killed = "";
  let takeover: number | null = null;
  const events: string[] = [];
  const live = () =>
    replicas.map((r, j) => r === null ? -1 : j).filter((j) => j >= 0);
  const r = await stream(
    items,
    (i) => nginx?.base ?? replicas[live()[i % live().length]!]!.base,
    (i) => nginx?.base ?? replicas[live()[(i + 1) % live().length]!]!.base,
    () => learnerNow,
    async (n) => {
      if (n === killAt) {
        learnerNow = await learnerOf();
        const i = replicas.findIndex((r, j) =>
          r !== null && `r${j + 1}` === learnerNow
        );
        if (i >= 0) {
          killed = learnerNow;
          replicas[i]!.child.kill("SIGKILL");
          await replicas[i]!.child.status;
          replicas[i] = null;
          killedAt = performance.now();
          events.push(`killed the learner ${killed} (SIGKILL) at request ${n}`);
          // The next learner, in the background.
          (async () => {
            while (
              takeover === null && performance.now() - killedAt < 120_000
            ) {
              const who = await learnerOf();
              if (who !== "none" && who !== killed) {
                takeover = (performance.now() - killedAt) / 1000;
                events.push(
                  `${who} learned ${takeover.toFixed(1)} s after the kill`,
                );
              }
              await new Promise((r) => setTimeout(r, 200));
            }
          })();
        } else events.push(`no learner to kill at request ${n}`);
      }
      if (downAt > 0 && n === downAt) {
        await redis.stop();
        events.push(`store stopped at request ${n} for ${downS} s`);
        setTimeout(async () => {
          redis = await startRedis(redisPort, `${root}/redis`);
          events.push("store started again on its data");
        }, downS * 1000);
      }
    },
  );
  await settle(async () => {
    for (const x of alive()) {
      const s = await getJson(`${x.base}/v1/stats`);
      if (s?.learn?.learner === true) {
        return s.learn.running === true ||
          (s.learn.fleet?.outbox?.waiting ?? 0) > 0;
      }
    }
    return true;
  });
  watching = false;
  await watch;
  const survivors = replicas.map((x, i) => ({ x, i })).filter((s) =>
    s.x !== null
  );
  const stats = await Promise.all(
    survivors.map((s) => getJson(`${s.x!.base}/v1/stats`)),
  );
  const health = await Promise.all(
    survivors.map((s) => getJson(`${s.x!.base}/v1/health`)),
  );
  const lines = await Promise.all(survivors.map((s) => labelLines(dirs[s.i]!)));
  const learnerStats = stats.find((s) => s?.learn?.learner === true)?.learn;
  const fleetPasses = await passes(dirs[survivors[0]!.i]!);
  const history =
    (await Deno.readTextFile(`${dirs[survivors[0]!.i]}/retrains.jsonl`)
      .catch(() => "")).split("\n").filter((l) => l !== "").map((l) =>
        JSON.parse(l)
      );
  nginx && await nginx.stop();
  await Promise.all(alive().map((x) => x.stop()));
  await redis.stop();
  return {
    ...r,
    events,
    killed,
    takeover,
    survivors: survivors.map((s) => `r${s.i + 1}`),
    labelLines: lines,
    learnerLabels: learnerStats?.labels ?? null,
    replicas: learnerStats?.fleet?.replicas ?? {},
    bundleIds: health.map((h) => (h?.bundle_id as string ?? "").slice(0, 12)),
    lags,
    history,
    passes: fleetPasses,
    root,
  };
}

const train = await readTraces([`${DATA}banking77/train.csv`]);
let items = streamOf(train, Number(values.held), Number(values.seed));
if (values.limit !== undefined) items = items.slice(0, Number(values.limit));
console.log(
  `bench:fleet: ${items.length} BANKING77 texts at ${RATE}/s, ${REPLICAS} learning replicas ${
    viaNginx ? "behind nginx (round robin)" : "in turn, each label to the next"
  }, beside one learner on the same stream`,
);
const alone = values["no-single"] ? null : await single(items);
const f = await fleet(items);
console.log(
  "\nwindow  | one learner: certified, disagreement | fleet: certified, disagreement | learner at its end",
);
f.windows.forEach((w, k) => {
  const a = alone?.windows[k];
  const share = (x: Window | undefined) =>
    x === undefined
      ? "-"
      : `${percent(x.certified / Math.max(1, x.requests))}, ${
        percent(x.wrong / Math.max(1, x.certified))
      }`;
  console.log(
    `${String(w.end).padStart(6)}  | ${share(a).padEnd(36)} | ${
      share(w).padEnd(30)
    } | ${w.learner}`,
  );
});
const sum = (ws: Window[]) =>
  ws.reduce((t, w) => ({
    requests: t.requests + w.requests,
    certified: t.certified + w.certified,
    wrong: t.wrong + w.wrong,
  }), { requests: 0, certified: 0, wrong: 0 });
for (
  const [name, ws] of [
    ["one learner", alone?.windows ?? null],
    ["fleet", f.windows],
  ] as const
) {
  if (ws === null) continue;
  const t = sum(ws);
  console.log(
    `${name}: ${percent(t.certified / t.requests)} certified over the stream, ${
      percent(t.wrong / Math.max(1, t.certified))
    } of them against the label; worst window ${
      percent(Math.max(...ws.map((w) => w.wrong / Math.max(1, w.certified))))
    }`,
  );
}
for (const e of f.events) console.log(`event: ${e}`);
if (alone !== null) {
  console.log(`one learner's passes (labels, * swapped in): ${alone.passes}`);
}
console.log(`the fleet's passes (labels, * swapped in): ${f.passes}`);
console.log(
  `labels acknowledged (2xx, kept): ${f.acknowledged}; label lines in each survivor's folder (${
    f.survivors.join(", ")
  }): ${
    f.labelLines.join(", ")
  }; the learner counts ${f.learnerLabels}; requests failed: ${f.failed}`,
);
const byLease = new Map<
  number,
  { learner: string; passes: number; swapped: number[] }
>();
for (const h of f.history) {
  const k = h.lease ?? 0;
  const e = byLease.get(k) ??
    { learner: h.learner ?? "?", passes: 0, swapped: [] as number[] };
  e.passes++;
  if (h.swapped) e.swapped.push(h.labels);
  byLease.set(k, e);
}
for (const [lease, e] of byLease) {
  console.log(
    `lease ${lease} (${e.learner}): ${e.passes} passes, swapped in on ${
      e.swapped.join(", ") || "none"
    } labels`,
  );
}
console.log(
  `survivors' bundle ids: ${
    f.bundleIds.join(", ")
  }; a new bundle id reached every replica within ${
    f.lags.length === 0
      ? "-"
      : `${
        Math.max(...f.lags).toFixed(2)
      } s at most (${f.lags.length} bundle ids)`
  }`,
);
for (const [replica, s] of Object.entries(f.replicas as Json)) {
  console.log(
    `replica ${replica}: ${s.decisions} decisions, ${s.picked} picked for calibration, ${s.picks_answered} answered; ${s.labels} labels taken`,
  );
}
await Deno.remove(f.root, { recursive: true }).catch(() => {});
