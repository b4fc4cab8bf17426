/**
 * HTTP benchmark: `POST /v1/decide` on a BANKING77 bundle (one 77-option
 * question) against a bare `Deno.serve` JSON echo, loaded in the same run
 * by `wrk` with the same settings (keep-alive, short 10-20 word texts).
 * Prints the throughput ratio, the server-side `latency_us` median and 99th
 * percentile, resident memory and bundle load time. Only 127.0.0.1 is used.
 *
 * Usage: deno task bench:http [--bundle DIR] [--duration 10] [--threads 1]
 *        [--connections 32] [--data DIR]
 *
 * Without `--bundle`, trains one from `../shared/data/banking77/train.csv`
 * into a temporary folder; without that file (or `wrk`), prints why and
 * exits 0.
 *
 * @module
 */

import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    bundle: { type: "string" },
    duration: { type: "string", default: "10" },
    warmup: { type: "string", default: "3" },
    rounds: { type: "string", default: "3" },
    threads: { type: "string", default: "1" },
    connections: { type: "string", default: "32" },
    data: {
      type: "string",
      default: new URL("../../shared/data/", import.meta.url).pathname,
    },
  },
});

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const TRAIN_CSV = `${values.data.replace(/\/$/, "")}/banking77/train.csv`;
const TEST_CSV = `${values.data.replace(/\/$/, "")}/banking77/test.csv`;

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

async function waitHealthy(
  url: string,
  child: Deno.ChildProcess,
): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      const res = await fetch(url);
      await res.body?.cancel();
      if (res.ok) return;
    } catch {
      // not up yet
    }
    const status = await Promise.race([
      child.status,
      new Promise((r) => setTimeout(r, 50, null)),
    ]);
    if (status !== null) {
      throw new Error(`server exited before answering ${url}`);
    }
  }
  throw new Error(`no answer from ${url}`);
}

/** Reads a child's stdout until `pattern` matches; returns the match. */
async function readUntil(
  stream: ReadableStream<Uint8Array>,
  pattern: RegExp,
): Promise<RegExpMatchArray> {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`output ended without ${pattern}: ${text}`);
    text += value;
    const m = text.match(pattern);
    if (m) {
      // Keep draining so the child never blocks on a full pipe.
      (async () => {
        while (!(await reader.read()).done) { /* drain */ }
      })().catch(() => {});
      return m;
    }
  }
}

/**
 * Resident memory of a process (VmRSS), in MB. Read through `cat`: Deno
 * grants `/proc` only with --allow-all, and this script runs without it.
 */
async function rssMb(pid: number): Promise<number | null> {
  try {
    const out = await new Deno.Command("cat", {
      args: [`/proc/${pid}/status`],
      stdout: "piped",
      stderr: "null",
    }).output();
    const m = new TextDecoder().decode(out.stdout).match(/VmRSS:\s+(\d+) kB/);
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** CPU time (user + system) a process has used, in seconds, from /proc through `cat`. */
async function cpuSeconds(pid: number): Promise<number> {
  const out = await new Deno.Command("cat", {
    args: [`/proc/${pid}/stat`],
    stdout: "piped",
    stderr: "null",
  }).output();
  const fields = new TextDecoder().decode(out.stdout).split(") ")[1]?.split(
    " ",
  ) ?? [];
  // utime and stime are fields 14 and 15 of the whole line, in clock ticks (100 per second on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Short texts of 10 to 20 words from the BANKING77 test split, read at run time. */
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

function luaScript(bodies: string[]): string {
  const quoted = bodies.map((b) => `  ${JSON.stringify(b)},`).join("\n");
  return `wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local bodies = {
${quoted}
}
local i = 0
request = function()
  i = (i % #bodies) + 1
  return wrk.format(nil, nil, nil, bodies[i])
end
`;
}

interface WrkResult {
  rps: number;
  requests: number;
  seconds: number;
  non2xx: number;
  errors: string;
  raw: string;
}

async function wrk(
  url: string,
  script: string,
  seconds: number,
): Promise<WrkResult> {
  const args = [
    `-t${values.threads}`,
    `-c${values.connections}`,
    `-d${seconds}s`,
    "-s",
    script,
    url,
  ];
  const out = await new Deno.Command("wrk", {
    args,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const raw = new TextDecoder().decode(out.stdout) +
    new TextDecoder().decode(out.stderr);
  const rps = Number(raw.match(/Requests\/sec:\s+([\d.]+)/)?.[1] ?? NaN);
  const non2xx = Number(
    raw.match(/Non-2xx or 3xx responses:\s+(\d+)/)?.[1] ?? 0,
  );
  const errors = raw.match(/Socket errors:.*/)?.[0] ?? "";
  const requests = Number(raw.match(/(\d+) requests in/)?.[1] ?? NaN);
  return { rps, requests, seconds: requests / rps, non2xx, errors, raw };
}

/** Sums rounds of one target: total requests over total seconds. */
function combine(runs: WrkResult[]): WrkResult {
  const requests = runs.reduce((n, r) => n + r.requests, 0);
  const seconds = runs.reduce((n, r) => n + r.seconds, 0);
  return {
    rps: requests / seconds,
    requests,
    seconds,
    non2xx: runs.reduce((n, r) => n + r.non2xx, 0),
    errors: runs.map((r) => r.errors).filter(Boolean).join("; "),
    raw: runs.map((r) => r.raw).join("\n"),
  };
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
const pids: Record<string, number> = {};
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

  const texts = await shortTexts();
  const decideBodies = texts.map((t) => JSON.stringify({ state: t }));
  const script = `${work}/post.lua`;
  await Deno.writeTextFile(script, luaScript(decideBodies));

  // The bare baselines: a JSON echo, and a fixed reply as large as a decide
  // reply (so the cost of the reply's size alone is visible).
  const echoFile = `${work}/echo.ts`;
  await Deno.writeTextFile(
    echoFile,
    `const [port, fixed] = [Number(Deno.args[0]), Deno.args[1]];
Deno.serve({ hostname: "127.0.0.1", port, onListen() {} }, async (req) => {
  const body = await req.json();
  return fixed === undefined ? Response.json(body) : new Response(fixed, { headers: { "content-type": "application/json" } });
});
`,
  );

  const servePort = freePort();
  const server = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
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
  const loaded = await readUntil(server.stdout, /loaded in ([\d.]+) ms/);
  const base = `http://127.0.0.1:${servePort}`;
  await waitHealthy(`${base}/v1/health`, server);

  const sample = await fetch(`${base}/v1/decide`, {
    method: "POST",
    body: decideBodies[0]!,
  });
  const decideReply = await sample.text();
  const baselines: Record<string, string> = {};
  for (
    const [name, extra] of [["echo", []], ["fixed", [decideReply]]] as const
  ) {
    const port = freePort();
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        `--allow-net=127.0.0.1:${port}`,
        echoFile,
        String(port),
        ...extra,
      ],
      stdout: "null",
      stderr: "inherit",
    }).spawn();
    children.push(child);
    baselines[name] = `http://127.0.0.1:${port}/`;
    pids[name] = child.pid;
    for (let i = 0; i < 200; i++) {
      try {
        const r = await fetch(baselines[name]!, { method: "POST", body: "{}" });
        await r.body?.cancel();
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }
  pids.decide = server.pid;
  const targets: Record<string, string> = {
    echo: baselines.echo!,
    fixed: baselines.fixed!,
    decide: `${base}/v1/decide`,
  };

  const duration = Number(values.duration);
  const warmup = Number(values.warmup);
  const rounds = Math.max(1, Number(values.rounds));
  const slice = Math.max(1, Math.round(duration / rounds));
  console.log(
    `wrk -t${values.threads} -c${values.connections}, keep-alive, ${texts.length} texts of 10-20 words; ` +
      `${rounds} alternating rounds of ${slice} s per target (the machine is shared: alternating evens out its load)`,
  );
  // Warm all up (JIT), then measure each with the same settings, alternating.
  for (const url of Object.values(targets)) await wrk(url, script, warmup);
  const runs: Record<string, WrkResult[]> = { echo: [], fixed: [], decide: [] };
  const cpuUs: Record<string, number> = { echo: 0, fixed: 0, decide: 0 };
  for (let i = 0; i < rounds; i++) {
    for (const [name, url] of Object.entries(targets)) {
      const before = await cpuSeconds(pids[name]!);
      runs[name]!.push(await wrk(url, script, slice));
      cpuUs[name]! += ((await cpuSeconds(pids[name]!)) - before) * 1e6;
    }
  }
  const echoRun = combine(runs.echo!);
  const fixedRun = combine(runs.fixed!);
  const decideRun = combine(runs.decide!);
  const perRound = runs.echo!.map((e, i) =>
    (runs.decide![i]!.rps / e.rps).toFixed(2)
  ).join(", ");
  const cpuPerRequest = (name: string, run: WrkResult) =>
    (cpuUs[name]! / run.requests).toFixed(1);
  const rss = await rssMb(server.pid);

  const stats = await (await fetch(`${base}/v1/stats`)).json();
  // Sequential sample on an idle server: latency_us from the responses themselves.
  const samples: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const r = await fetch(`${base}/v1/decide`, {
      method: "POST",
      body: decideBodies[i % decideBodies.length]!,
    });
    samples.push((await r.json()).latency_us);
  }
  samples.sort((a, b) => a - b);

  const ratio = decideRun.rps / echoRun.rps;
  const q = stats.bundle.questions[0];
  console.log(
    `bundle: ${bundle}, question ${q.name} with ${q.options.length} options`,
  );
  const line = (label: string, name: string, run: WrkResult) =>
    console.log(
      `${label.padEnd(44)} ${run.rps.toFixed(0).padStart(7)} requests/s, ` +
        `server CPU ${cpuPerRequest(name, run)} us/request ${run.errors}`,
    );
  line("bare Deno.serve JSON echo:", "echo", echoRun);
  line(
    `bare Deno.serve, fixed ${decideReply.length}-byte reply:`,
    "fixed",
    fixedRun,
  );
  line("POST /v1/decide:", "decide", decideRun);
  const non2xx = echoRun.non2xx + fixedRun.non2xx + decideRun.non2xx;
  if (non2xx > 0) console.log(`non-2xx responses: ${non2xx}`);
  const verdict = (ok: boolean) => (ok ? "ok" : "MISSED");
  console.log(
    `throughput ratio decide/echo: ${
      ratio.toFixed(2)
    } (per round: ${perRound}; target >= 0.5: ${verdict(ratio >= 0.5)})`,
  );
  const lat = stats.latency_us;
  console.log(
    `server latency_us under load (/v1/stats, ${lat.count} requests incl. warm-up): median ${lat.p50}, p99 ${lat.p99}, max ${lat.max}`,
  );
  const p50 = percentile(samples, 0.5);
  const p99 = percentile(samples, 0.99);
  console.log(
    `server latency_us, 2000 sequential requests: median ${p50}, p99 ${p99} ` +
      `(targets <= 20 and <= 100: ${verdict(p50 <= 20)}, ${
        verdict(p99 <= 100)
      })`,
  );
  console.log(
    `resident memory (VmRSS) after load: ${
      rss === null ? "n/a" : `${rss.toFixed(1)} MB`
    } (target <= 150 MB: ${verdict(rss !== null && rss <= 150)})`,
  );
  const loadMs = Number(loaded[1]);
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
