/**
 * Memory soak: `POST /v1/decide` under `wrk` with texts of never-seen
 * random words (every request brings new words, so the word cache fills to
 * its budget and stays there), for `--minutes` (10 by default). Prints the
 * server's resident memory (VmRSS), the word cache's size and the requests
 * served every `--every` seconds, then the largest RSS seen against the
 * 150 MB target, and any non-2xx reply or socket error. Only 127.0.0.1 is
 * used.
 *
 * Usage: deno task soak:http [--bundle DIR] [--minutes 10] [--every 10]
 *        [--connections 16] [--data DIR]
 *
 * Without `--bundle`, trains one from `../shared/data/banking77/train.csv`
 * into a temporary folder; without that file (or `wrk`), prints why and
 * exits 0.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { SERVE_V8_FLAGS } from "../src/cli/serve.ts";
import { freePort, rssMbOrNull as rssMb } from "./processes.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    bundle: { type: "string" },
    minutes: { type: "string", default: "10" },
    every: { type: "string", default: "10" },
    connections: { type: "string", default: "16" },
    "v8-flags": { type: "string", default: SERVE_V8_FLAGS },
    data: {
      type: "string",
      default: new URL("../../shared/data/", import.meta.url).pathname,
    },
  },
});

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const TRAIN_CSV = `${values.data.replace(/\/$/, "")}/banking77/train.csv`;
const TARGET_MB = 150;

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

async function hasWrk(): Promise<boolean> {
  try {
    const { success } = await new Deno.Command("sh", {
      args: ["-c", "command -v wrk"],
      stdout: "null",
    }).output();
    return success;
  } catch {
    return false;
  }
}

/**
 * A wrk script posting texts of 10 to 20 random lower-case words of 3 to
 * 12 letters: about 10^15 possible words, so practically every one is new.
 */
const RANDOM_WORDS_LUA = `wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local letters = "abcdefghijklmnopqrstuvwxyz"
init = function(args)
  math.randomseed(os.time() + math.floor(os.clock() * 1000000))
end
local function word()
  local n = math.random(3, 12)
  local t = {}
  for i = 1, n do
    local k = math.random(1, 26)
    t[i] = string.sub(letters, k, k)
  end
  return table.concat(t)
end
request = function()
  local n = math.random(10, 20)
  local w = {}
  for i = 1, n do w[i] = word() end
  return wrk.format(nil, nil, nil, '{"state":"' .. table.concat(w, " ") .. '"}')
end
`;

if (!(await hasWrk())) {
  console.log("skipped: wrk is not installed (apt-get install wrk)");
  Deno.exit(0);
}
if (values.bundle === undefined && !(await exists(TRAIN_CSV))) {
  console.log(
    `skipped: no BANKING77 data at ${TRAIN_CSV} (pass --data DIR or --bundle DIR)`,
  );
  Deno.exit(0);
}

const work = await Deno.makeTempDir({ prefix: "dtable-soak-http-" });
const children: Deno.ChildProcess[] = [];
try {
  let bundle = values.bundle;
  if (bundle === undefined) {
    bundle = `${work}/banking77`;
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
  }
  const port = freePort();
  const server = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...(values["v8-flags"] === ""
        ? []
        : [`--v8-flags=${values["v8-flags"]}`]),
      `--allow-net=127.0.0.1:${port}`,
      `--allow-read=${bundle}`,
      "--allow-env=SERVICE_PROXY_TOKEN",
      MAIN,
      "serve",
      "--bundle",
      bundle,
      "--port",
      String(port),
    ],
    env: { SERVICE_PROXY_TOKEN: "" },
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  children.push(server);
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0;; i++) {
    try {
      const res = await fetch(`${base}/v1/health`);
      await res.body?.cancel();
      if (res.ok) break;
    } catch {
      if (i > 400) throw new Error("the server did not start");
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const script = `${work}/random-words.lua`;
  await Deno.writeTextFile(script, RANDOM_WORDS_LUA);
  const minutes = Number(values.minutes);
  const every = Number(values.every);
  console.log(
    `soak: wrk -t1 -c${values.connections} for ${minutes} min on POST /v1/decide, ` +
      `texts of 10-20 never-seen random words; resident memory every ${every} s`,
  );
  const load = new Deno.Command("wrk", {
    args: [
      "-t1",
      `-c${values.connections}`,
      `-d${Math.round(minutes * 60)}s`,
      "-s",
      script,
      `${base}/v1/decide`,
    ],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let finished = false;
  const loadDone = load.output().then((out) => {
    finished = true;
    return new TextDecoder().decode(out.stdout) +
      new TextDecoder().decode(out.stderr);
  });
  const start = performance.now();
  let peak = 0;
  const samples: string[] = [];
  while (!finished) {
    await Promise.race([
      loadDone,
      new Promise((r) => setTimeout(r, every * 1000)),
    ]);
    const rss = await rssMb(server.pid);
    const stats = await (await fetch(`${base}/v1/stats`)).json();
    const t = (performance.now() - start) / 1000;
    if (rss !== null) peak = Math.max(peak, rss);
    const mb = (bytes: number) => (bytes / 1048576).toFixed(1);
    const m = stats.memory;
    const line = `${t.toFixed(0).padStart(5)} s  RSS ${
      rss === null ? "n/a" : `${rss.toFixed(1)} MB`
    } (JS heap ${mb(m.heap_used_bytes)} of ${
      mb(m.heap_total_bytes)
    } MB, outside it ${
      mb(m.external_bytes)
    } MB)  word cache ${m.word_cache_words} words, ${
      mb(m.word_cache_bytes)
    } of ${
      mb(m.word_cache_budget_bytes)
    } MiB  requests ${stats.counts.requests}  errors ${stats.counts.errors}`;
    samples.push(line);
    console.log(line);
  }
  const wrkOut = await loadDone;
  const non2xx = Number(
    wrkOut.match(/Non-2xx or 3xx responses:\s+(\d+)/)?.[1] ?? 0,
  );
  const socketErrors = wrkOut.match(/Socket errors:.*/)?.[0] ?? "none";
  console.log(
    `wrk: ${
      wrkOut.match(/Requests\/sec:\s+[\d.]+/)?.[0] ?? "?"
    }, non-2xx ${non2xx}, socket errors: ${socketErrors}`,
  );
  console.log(
    `largest resident memory over the soak: ${
      peak.toFixed(1)
    } MB (target <= ${TARGET_MB} MB: ${peak <= TARGET_MB ? "ok" : "MISSED"})`,
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
