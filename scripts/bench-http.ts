/**
 * HTTP benchmark: the three decision routes on a BANKING77 bundle (one
 * 77-option question), each against two anchors that return a fixed reply
 * of the same bytes: a bare `Deno.serve`, and a one-route Hono app on
 * `Deno.serve` without middleware (`c.req.text()`, `c.body(...)`), loaded
 * in the same run by `wrk` with the same settings (keep-alive, 10-20 word
 * texts), in alternating rounds. Prints each route's throughput ratio to
 * both anchors (target >= 0.7 of the Hono app), the server CPU per
 * request of each target, where that time goes, the ceiling the engine
 * alone sets (the Hono anchor with the engine answering each request, its
 * reply still the fixed one), the server-side `latency_us` under load and
 * for sequential requests, the same work in a tight loop and piece by piece
 * in process (parse, featurise, assess, reply writer, `Response`),
 * resident memory and bundle load time. Only 127.0.0.1 is used.
 *
 * Usage: deno task bench:http [--bundle DIR] [--rounds 3] [--seconds 3]
 *        [--warmup 2] [--connections 16] [--data DIR] [--tiers-bundle DIR]
 *
 * With `--tiers-bundle` (a bundle of format 4), then measures both tiers
 * on it (`scripts/bench-tiers.ts`, for 5 times `--seconds` per load).
 *
 * Without `--bundle`, trains one from `../shared/data/banking77/train.csv`
 * into a temporary folder; without that file (or `wrk`), prints why and
 * exits 0.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { SERVE_V8_FLAGS } from "../src/cli/serve.ts";
import { luaScript, runWrk, type WrkRun } from "./wrk.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    bundle: { type: "string" },
    seconds: { type: "string", default: "3" },
    warmup: { type: "string", default: "2" },
    rounds: { type: "string", default: "3" },
    connections: { type: "string", default: "16" },
    "tiers-bundle": { type: "string" },
    data: {
      type: "string",
      default: new URL("../../shared/data/", import.meta.url).pathname,
    },
  },
});

const ROOT = new URL("../", import.meta.url);
const MAIN = new URL("main.ts", ROOT).pathname;
const CONFIG = new URL("deno.json", ROOT).pathname;
const DATA = values.data.replace(/\/$/, "");
const TRAIN_CSV = `${DATA}/banking77/train.csv`;
const TEST_CSV = `${DATA}/banking77/test.csv`;
const ROUTES = ["/v1/decide", "/v1/decisions", "/v1/altdecisions"] as const;
type Route = typeof ROUTES[number];

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

async function which(cmd: string): Promise<boolean> {
  try {
    const { success } = await new Deno.Command("sh", {
      args: ["-c", `command -v ${cmd}`],
      stdout: "null",
    }).output();
    return success;
  } catch {
    return false;
  }
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = l.addr as Deno.NetAddr;
  l.close();
  return port;
}

/** Waits until `url` answers a POST of `body`. */
async function waitReady(
  url: string,
  body: string,
  child: Deno.ChildProcess,
): Promise<void> {
  let exited = false;
  child.status.then(() => (exited = true));
  for (let i = 0; i < 400; i++) {
    if (exited) throw new Error(`the server for ${url} exited`);
    try {
      const res = await fetch(url, { method: "POST", body });
      await res.body?.cancel();
      if (res.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no answer from ${url}`);
}

/** Reads /proc through `cat`: Deno grants /proc only with --allow-all. */
async function procFile(pid: number, name: string): Promise<string> {
  const out = await new Deno.Command("cat", {
    args: [`/proc/${pid}/${name}`],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(out.stdout);
}

/** Resident memory of a process (VmRSS), in MB. */
async function rssMb(pid: number): Promise<number | null> {
  const m = (await procFile(pid, "status")).match(/VmRSS:\s+(\d+) kB/);
  return m ? Number(m[1]) / 1024 : null;
}

/** CPU time (user + system) a process has used, in seconds. */
async function cpuSeconds(pid: number): Promise<number> {
  const fields = (await procFile(pid, "stat")).split(") ")[1]?.split(" ") ?? [];
  // utime and stime, fields 14 and 15 of the line, in ticks of 1/100 s.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Texts of 10 to 20 words from the BANKING77 test split. */
async function shortTexts(): Promise<string[]> {
  const lines = (await Deno.readTextFile(TEST_CSV)).split("\n").slice(1);
  const texts: string[] = [];
  for (const line of lines) {
    const comma = line.lastIndexOf(",");
    if (comma <= 0) continue;
    let text = line.slice(0, comma);
    if (text.startsWith('"') && text.endsWith('"')) {
      text = text.slice(1, -1).replace(/""/g, '"');
    }
    const words = text.split(/\s+/).filter(Boolean).length;
    if (words >= 10 && words <= 20) texts.push(text);
    if (texts.length >= 500) break;
  }
  return texts;
}

/** The body each route is loaded with, for a text and the bundle's question. */
function bodyFor(route: Route, text: string, question: string): string {
  switch (route) {
    case "/v1/decide":
      return JSON.stringify({ state: text });
    case "/v1/decisions":
      return JSON.stringify({
        input: text,
        questions: [{ type: "choice", name: question }],
      });
    case "/v1/altdecisions":
      return JSON.stringify({
        state: text,
        questions: { [question]: { type: "choice" } },
      });
  }
}

/** `wrk` with this run's connection count (see `runWrk`). */
function wrk(url: string, script: string, seconds: number): Promise<WrkRun> {
  return runWrk(url, script, seconds, Number(values.connections));
}

function percentile(sorted: number[], q: number): number {
  return sorted[
    Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))
  ]!;
}

if (!(await exists(TRAIN_CSV)) && values.bundle === undefined) {
  console.log(
    `skipped: no BANKING77 data at ${TRAIN_CSV} (pass --data DIR or --bundle DIR)`,
  );
  Deno.exit(0);
}
if (!(await exists(TEST_CSV))) {
  console.log(
    `skipped: no BANKING77 test texts at ${TEST_CSV} (the load uses them)`,
  );
  Deno.exit(0);
}
if (!(await which("wrk"))) {
  console.log("skipped: wrk is not installed (apt-get install wrk)");
  Deno.exit(0);
}

const work = await Deno.makeTempDir({ prefix: "dtable-bench-http-" });
const children: Deno.ChildProcess[] = [];
try {
  let bundle = values.bundle;
  if (bundle === undefined) {
    bundle = `${work}/banking77`;
    const t0 = performance.now();
    const trained = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-read",
        "--allow-write",
        MAIN,
        "train",
        "--traces",
        TRAIN_CSV,
        "--out",
        bundle,
        "--allow-uncalibrated",
        "--quiet",
      ],
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!trained.success) {
      throw new Error(
        `training failed: ${new TextDecoder().decode(trained.stderr)}`,
      );
    }
    console.log(
      `trained ${bundle} in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
  }

  // The service.
  const servePort = freePort();
  // The service runs as `deno task serve` runs it.
  const server = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      `--v8-flags=${SERVE_V8_FLAGS}`,
      `--allow-net=127.0.0.1:${servePort}`,
      `--allow-read=${bundle}`,
      "--allow-env=SERVICE_PROXY_TOKEN",
      MAIN,
      "serve",
      "--bundle",
      bundle,
      "--port",
      String(servePort),
    ],
    env: { SERVICE_PROXY_TOKEN: "" },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  children.push(server);
  const banner = server.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let bannerText = "";
  while (!/loaded in ([\d.]+) ms/.test(bannerText)) {
    const { done, value } = await banner.read();
    if (done) throw new Error(`serve ended: ${bannerText}`);
    bannerText += value;
  }
  (async () => {
    while (!(await banner.read()).done) { /* drain */ }
  })().catch(() => {});
  const loadMs = Number(bannerText.match(/loaded in ([\d.]+) ms/)![1]);
  const base = `http://127.0.0.1:${servePort}`;

  const health = await (await fetch(`${base}/v1/health`)).json();
  const question: string = health.questions[0];
  const texts = await shortTexts();
  const scripts = {} as Record<Route, string>;
  const replies = {} as Record<Route, string>;
  for (const route of ROUTES) {
    const bodies = texts.map((t) => bodyFor(route, t, question));
    scripts[route] = `${work}/${route.slice(4)}.lua`;
    await Deno.writeTextFile(scripts[route], luaScript(bodies, false));
    const res = await fetch(`${base}${route}`, {
      method: "POST",
      body: bodies[0]!,
    });
    replies[route] = await res.text();
  }
  const latencyScript = `${work}/latency.lua`;
  await Deno.writeTextFile(
    latencyScript,
    luaScript(texts.map((t) => bodyFor("/v1/decide", t, question)), true),
  );

  // The anchors, per route: a bare Deno.serve returning that route's reply
  // bytes (reading the body as text, as a real route does).
  const bareFile = `${work}/bare.ts`;
  await Deno.writeTextFile(
    bareFile,
    `const [port, file] = [Number(Deno.args[0]), Deno.args[1]];
const fixed = await Deno.readFile(file);
const headers = { "content-type": "application/json" };
Deno.serve({ hostname: "127.0.0.1", port, onListen() {} }, async (req) => {
  await req.text();
  return new Response(fixed, { headers });
});
`,
  );
  // And a one-route Hono app on Deno.serve, no middleware, reading the body
  // with c.req.text() and returning the route's reply bytes with c.body();
  // with "engine", the engine also answers the text of each request (its
  // answer unused, the reply still the fixed one): the ceiling the engine
  // alone sets, with no reply writer, statistics or middleware.
  const honoFile = `${work}/hono.ts`;
  await Deno.writeTextFile(
    honoFile,
    `import { Hono } from "hono";
import { loadBundle } from ${
      JSON.stringify(new URL("src/bundle/files.ts", ROOT).href)
    };
import { assess, prepareText, warmUp } from ${
      JSON.stringify(new URL("src/engine/mod.ts", ROOT).href)
    };
import { DriftMonitor } from ${
      JSON.stringify(new URL("src/engine/drift.ts", ROOT).href)
    };
import { TableState } from ${
      JSON.stringify(new URL("src/engine/state.ts", ROOT).href)
    };
const [port, route, file, bundle, engine] = [Number(Deno.args[0]), Deno.args[1]!, Deno.args[2]!, Deno.args[3]!, Deno.args[4] === "engine"];
const fixed = await Deno.readFile(file);
const table = await loadBundle(bundle);
const state = new TableState(table);
warmUp(table, state);
const monitor = new DriftMonitor(table.settings.drift);
const question = table.questions[0]!.name;
const headers = { "content-type": "application/json" };
const app = new Hono();
app.post(route, async (c) => {
  const text = await c.req.text();
  if (engine) {
    const body = JSON.parse(text);
    const state_ = typeof body.state === "string" ? body.state : body.input;
    assess(table, state, prepareText(table, state, state_), question, {}, monitor);
  }
  return c.body(fixed, 200, headers);
});
Deno.serve({ hostname: "127.0.0.1", port, onListen() {} }, app.fetch);
`,
  );
  const urls: Record<string, string> = {};
  const pids: Record<string, number> = {};
  const spawn = async (name: string, args: string[], url: string) => {
    const child = new Deno.Command(Deno.execPath(), {
      args,
      stdout: "null",
      stderr: "inherit",
    }).spawn();
    children.push(child);
    pids[name] = child.pid;
    urls[name] = url;
    await waitReady(url, '{"state":"x"}', child);
  };
  // Per route: the service, its bare anchor and its Hono anchor.
  const targets = [
    { route: "/v1/decide", ours: "decide", bare: "bare", hono: "hono" },
    {
      route: "/v1/decisions",
      ours: "decisions",
      bare: "bare-decisions",
      hono: "hono-decisions",
    },
    {
      route: "/v1/altdecisions",
      ours: "alt",
      bare: "bare-alt",
      hono: "hono-alt",
    },
  ] as const;
  const scriptOf: Record<string, string> = {};
  for (const t of targets) {
    const file = `${work}/${t.ours}.json`;
    await Deno.writeTextFile(file, replies[t.route]);
    let port = freePort();
    await spawn(t.bare, [
      "run",
      `--allow-net=127.0.0.1:${port}`,
      "--allow-read",
      bareFile,
      String(port),
      file,
    ], `http://127.0.0.1:${port}${t.route}`);
    port = freePort();
    const honoArgs = [
      "run",
      `--allow-net=127.0.0.1:${port}`,
      "--allow-read",
      "--config",
      CONFIG,
      honoFile,
      String(port),
      t.route,
      file,
      bundle,
    ];
    await spawn(t.hono, honoArgs, `http://127.0.0.1:${port}${t.route}`);
    if (t.ours === "decide") {
      port = freePort();
      honoArgs[1] = `--allow-net=127.0.0.1:${port}`;
      honoArgs[6] = String(port);
      await spawn(
        "hono-engine",
        [...honoArgs, "engine"],
        `http://127.0.0.1:${port}${t.route}`,
      );
      scriptOf["hono-engine"] = scripts[t.route];
    }
    pids[t.ours] = server.pid;
    urls[t.ours] = `${base}${t.route}`;
    for (const name of [t.ours, t.bare, t.hono]) {
      scriptOf[name] = scripts[t.route];
    }
  }
  const order = [
    "bare",
    "hono",
    "decide",
    "hono-engine",
    "bare-decisions",
    "hono-decisions",
    "decisions",
    "bare-alt",
    "hono-alt",
    "alt",
  ];

  const seconds = Number(values.seconds);
  const rounds = Math.max(1, Number(values.rounds));
  console.log(
    `wrk -t1 -c${values.connections}, keep-alive, ${texts.length} BANKING77 test texts of 10-20 words; ` +
      `${rounds} alternating rounds of ${seconds} s per target (the machine is shared: alternating evens out its load)`,
  );
  console.log(
    `bundle: ${bundle}, question ${question} with ${
      health.questions.length === 1 ? "" : "(first of several) "
    }${
      (await (await fetch(`${base}/v1/stats`)).json()).bundle.questions[0]
        .options.length
    } options; ` +
      `reply bytes: ${
        ROUTES.map((r) => `${r} ${new TextEncoder().encode(replies[r]).length}`)
          .join(", ")
      }`,
  );
  for (const name of order) {
    await wrk(urls[name]!, scriptOf[name]!, Number(values.warmup));
  }
  const runs: Record<string, WrkRun[]> = {};
  const cpu: Record<string, number> = {};
  for (let i = 0; i < rounds; i++) {
    for (const name of order) {
      const before = await cpuSeconds(pids[name]!);
      (runs[name] ??= []).push(
        await wrk(urls[name]!, scriptOf[name]!, seconds),
      );
      cpu[name] = (cpu[name] ?? 0) + (await cpuSeconds(pids[name]!)) - before;
    }
  }
  const total = (name: string) => {
    const r = runs[name]!;
    const requests = r.reduce((n, x) => n + x.requests, 0);
    const time = r.reduce((n, x) => n + x.requests / x.rps, 0);
    return {
      rps: requests / time,
      requests,
      cpuUs: (cpu[name]! * 1e6) / requests,
    };
  };
  const labels: Record<string, string> = {
    bare: "bare Deno.serve, fixed decide reply",
    hono: "one-route Hono, fixed decide reply",
    decide: "POST /v1/decide",
    "hono-engine": "one-route Hono + engine, fixed reply",
    "bare-decisions": "bare Deno.serve, fixed decisions reply",
    "hono-decisions": "one-route Hono, fixed decisions reply",
    decisions: "POST /v1/decisions",
    "bare-alt": "bare Deno.serve, fixed altdecisions reply",
    "hono-alt": "one-route Hono, fixed altdecisions reply",
    alt: "POST /v1/altdecisions",
  };
  console.log(`${"".padEnd(44)} requests/s  server CPU/request`);
  for (const name of order) {
    const t = total(name);
    const bad = runs[name]!.reduce((n, r) => n + r.non2xx, 0);
    const errors = runs[name]!.map((r) => r.errors).filter(Boolean).join("; ");
    console.log(
      `${labels[name]!.padEnd(44)} ${t.rps.toFixed(0).padStart(10)}  ${
        t.cpuUs.toFixed(1).padStart(8)
      } us` +
        (bad > 0 ? `  (${bad} non-2xx)` : "") + (errors ? `  ${errors}` : ""),
    );
  }
  const verdict = (ok: boolean) => (ok ? "ok" : "MISSED");
  const ratioOf = (name: string, anchor: string) => {
    const perRound = runs[name]!.map((r, i) => r.rps / runs[anchor]![i]!.rps);
    return {
      ratio: total(name).rps / total(anchor).rps,
      perRound: perRound.map((x) => x.toFixed(2)).join(", "),
      // The same comparison in server CPU per request, which the machine's
      // other load disturbs less than throughput.
      cpu: total(anchor).cpuUs / total(name).cpuUs,
    };
  };
  for (const t of targets) {
    const h = ratioOf(t.ours, t.hono);
    const b = ratioOf(t.ours, t.bare);
    console.log(
      `${t.route}: ${
        h.ratio.toFixed(2)
      }x the one-route Hono app (per round ${h.perRound}; ` +
        `in server CPU per request ${h.cpu.toFixed(2)}; target >= 0.7: ${
          verdict(h.ratio >= 0.7)
        }), ` +
        `${b.ratio.toFixed(2)}x bare Deno.serve (per round ${b.perRound}; CPU ${
          b.cpu.toFixed(2)
        }); ` +
        `the Hono app is ${ratioOf(t.hono, t.bare).ratio.toFixed(2)}x bare`,
    );
  }
  const ceiling = ratioOf("hono-engine", "hono");
  console.log(
    `ceiling: the one-route Hono app with the engine answering each text (no reply writer, statistics, gate or body limits) ` +
      `runs at ${ceiling.ratio.toFixed(2)}x the Hono app (CPU ${
        ceiling.cpu.toFixed(2)
      }): /v1/decide cannot pass this`,
  );
  const bareUs = total("bare").cpuUs;
  const honoUs = total("hono").cpuUs;
  const engineUs = total("hono-engine").cpuUs;
  const decideUs = total("decide").cpuUs;
  console.log(
    `where a decide request's server CPU goes (same run): Deno.serve ${
      bareUs.toFixed(1)
    } us, Hono +${(honoUs - bareUs).toFixed(1)}, ` +
      `engine +${(engineUs - honoUs).toFixed(1)}, ` +
      `reply writer, statistics, middleware and body limits +${
        (decideUs - engineUs).toFixed(1)
      }; ` +
      `0.7x of the Hono app allows ${(honoUs / 0.7).toFixed(1)} us in all`,
  );

  // latency_us under load, from every reply of a wrk run that reads them.
  const loaded = await wrk(urls.decide!, latencyScript, 5);
  const lat = loaded.raw.match(/LATENCY (\d+) ([\d.]+) ([\d.]+) ([\d.]+)/);
  if (lat) {
    console.log(
      `latency_us under load (wrk -c${values.connections}, ${
        lat[1]
      } replies): median ${lat[2]}, p99 ${lat[3]}, max ${lat[4]} ` +
        `(target median <= 10: ${verdict(Number(lat[2]) <= 10)})`,
    );
  }
  // Sequential requests from one plain keep-alive client.
  const samples: number[] = [];
  const seqBodies = texts.map((t) => bodyFor("/v1/decide", t, question));
  for (let i = 0; i < 2000; i++) {
    const r = await fetch(urls.decide!, {
      method: "POST",
      body: seqBodies[i % seqBodies.length]!,
    });
    samples.push((await r.json()).latency_us);
  }
  samples.sort((a, b) => a - b);
  const p50 = percentile(samples, 0.5);
  const p99 = percentile(samples, 0.99);
  console.log(
    `latency_us, 2000 sequential requests from one keep-alive client: median ${p50}, p99 ${p99} ` +
      `(targets <= 12 and <= 40: ${verdict(p50 <= 12)}, ${verdict(p99 <= 40)})`,
  );
  // The same work latency_us covers, in a tight loop in this process: what
  // the service's latency would be with warm caches and nothing else running.
  {
    const { loadBundle } = await import("../src/bundle/files.ts");
    const { assess, prepareText, warmUp } = await import(
      "../src/engine/mod.ts"
    );
    const { TableState } = await import("../src/engine/state.ts");
    const { DriftMonitor } = await import("../src/engine/drift.ts");
    const { parseDecide } = await import("../src/wire/decide.ts");
    const table = await loadBundle(bundle);
    const state = new TableState(table);
    warmUp(table, state);
    const guard = new DriftMonitor(table.settings.drift);
    const tight: number[] = [];
    for (let i = 0; i < 22_000; i++) {
      const t0 = performance.now();
      const request = parseDecide(JSON.parse(seqBodies[i % seqBodies.length]!));
      const text = prepareText(table, state, request.text);
      for (const q of table.questions) {
        assess(table, state, text, q.name, {}, guard);
      }
      if (i >= 2000) tight.push((performance.now() - t0) * 1000);
    }
    tight.sort((a, b) => a - b);
    console.log(
      `the same work in a tight loop (this process, warm caches, ${tight.length} texts): ` +
        `median ${percentile(tight, 0.5).toFixed(1)} us, p99 ${
          percentile(tight, 0.99).toFixed(1)
        } us`,
    );
    // The same, piece by piece, with the reply writer and the Response a
    // decide request adds: the best of 5 rounds of 20,000 calls each.
    const { serviceTable } = await import("../src/wire/service_table.ts");
    const { writeDecideReply } = await import("../src/wire/decide.ts");
    const { JsonWriter } = await import("../src/wire/json_writer.ts");
    const { assessRequest } = await import("../src/wire/decision_request.ts");
    const served = serviceTable(table, guard, state);
    const requests = seqBodies.map((b) => parseDecide(JSON.parse(b)));
    const answers = requests.map((r) =>
      assessRequest(table, state, prepareText(table, state, r.text), r, guard)
    );
    const w = new JsonWriter();
    const headers = { "content-type": "application/json" };
    let sink = 0;
    const pieces: [string, (i: number) => void][] = [
      ["parse", (i) => {
        sink += parseDecide(JSON.parse(seqBodies[i]!)).text.length;
      }],
      ["prepareText", (i) => {
        sink += prepareText(table, state, requests[i]!.text).words.length;
      }],
      ["assess", (i) => {
        const text = prepareText(table, state, requests[i]!.text);
        sink += assess(table, state, text, question, {}, guard).slot;
      }],
      ["reply writer", (i) => {
        w.reset();
        writeDecideReply(w, served, requests[i]!, answers[i]!, 12.5);
        sink += w.length;
      }],
      ["new Response", () => {
        sink += new Response(w.view(), { headers }).status;
      }],
    ];
    const best = new Map<string, number>();
    for (let round = 0; round < 5; round++) {
      for (const [name, f] of pieces) {
        const t0 = performance.now();
        for (let i = 0; i < 20_000; i++) f(i % seqBodies.length);
        const us = (performance.now() - t0) * 1000 / 20_000;
        best.set(name, Math.min(best.get(name) ?? Infinity, us));
      }
    }
    // "assess" includes its prepareText: shown without it.
    const prep = best.get("prepareText")!;
    best.set("assess", best.get("assess")! - prep);
    console.log(
      `in process, per decide request (best of 5 rounds): ${
        [...best].map(([n, us]) => `${n} ${us.toFixed(2)} us`).join(", ")
      }${sink === 0 ? "" : ""}`,
    );
  }
  const rss = await rssMb(server.pid);
  console.log(
    `resident memory (VmRSS) after load: ${
      rss === null ? "n/a" : `${rss.toFixed(1)} MB`
    } ` +
      `(target <= 150 MB: ${verdict(rss !== null && rss <= 150)}); ` +
      "scripts/soak-http.ts runs the 10-minute soak of never-seen words",
  );
  console.log(
    `bundle load: ${loadMs.toFixed(1)} ms (target <= 300 ms: ${
      verdict(loadMs <= 300)
    })`,
  );
} finally {
  for (const c of children) {
    try {
      c.kill("SIGTERM");
    } catch {
      // already gone
    }
    await c.status;
  }
  await Deno.remove(work, { recursive: true });
}

// Both tiers, on a bundle with a second tier (see scripts/bench-tiers.ts).
if (values["tiers-bundle"] !== undefined) {
  const { benchTiers } = await import("./bench-tiers.ts");
  await benchTiers({
    bundle: values["tiers-bundle"],
    data: DATA,
    seconds: Number(values.seconds) * 5,
    workers: 1,
    queue: 16,
  });
} else {
  console.log(
    "tiers: not measured (give --tiers-bundle DIR, a bundle trained with train --semantic on, or run deno task bench:tiers)",
  );
}
