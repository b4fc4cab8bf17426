/**
 * The table-certified request path of this checkout against another
 * checkout of the project (`--before DIR`, such as `git worktree add DIR
 * <commit>`), side by side on one bundle: both servers run at once, and in
 * alternating rounds each gets sequential `/v1/decide` requests from one
 * keep-alive client (their server-side `latency_us`) and then a `wrk` load
 * of the same texts (requests a second). Texts are BANKING77 test texts
 * this checkout's table certifies (with `--uncertified`, texts it leaves
 * uncertified: the path where each answer gets a signed decision id).
 * Prints each side's figures and the
 * ratios now/before per round and overall: what "as before" means on a
 * shared machine, where absolute microseconds move with the load.
 *
 * Usage: deno task bench:versus --before DIR --bundle DIR [--rounds 4]
 *        [--requests 500] [--seconds 3] [--connections 16] [--uncertified]
 *
 * Without `wrk`, only the sequential figures; without the data, prints why
 * and exits 0.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { resolve } from "node:path";
import { DATA, exitWithoutData } from "./bench_data.ts";
import { hasCommand, type ServeProcess, startServe } from "./processes.ts";
import { luaScript, runWrk } from "./wrk.ts";
import { readTraces } from "../src/traces/mod.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    before: { type: "string" },
    bundle: { type: "string" },
    rounds: { type: "string", default: "4" },
    requests: { type: "string", default: "500" },
    seconds: { type: "string", default: "3" },
    connections: { type: "string", default: "16" },
    uncertified: { type: "boolean", default: false },
  },
});
if (values.before === undefined || values.bundle === undefined) {
  console.error(
    "Usage: bench-versus.ts --before DIR --bundle DIR [--rounds N] [--requests N] [--seconds S] [--connections N]",
  );
  Deno.exit(2);
}
await exitWithoutData();
const before = resolve(values.before);
const bundle = resolve(values.bundle);
const rounds = Number(values.rounds);
const requests = Number(values.requests);
const seconds = Number(values.seconds);
const connections = Number(values.connections);

const servers: Record<"before" | "now", ServeProcess> = {
  before: await startServe(bundle, [], {
    main: `${before}/main.ts`,
    cwd: before,
  }),
  now: await startServe(bundle, []),
};

try {
  // The texts: BANKING77 test texts this checkout certifies (or, with
  // --uncertified, leaves uncertified), in file order.
  const test = await readTraces([`${DATA}banking77/test.csv`]);
  const texts: string[] = [];
  for (const text of test.texts) {
    if (texts.length >= requests) break;
    const { answers } = await post(servers.now, text) as {
      answers: Record<string, { certified: boolean }>;
    };
    const wanted = !values.uncertified;
    if (Object.values(answers).every((a) => a.certified === wanted)) {
      texts.push(text);
    }
  }
  const bodies = texts.map((t) => JSON.stringify({ state: t }));
  const withWrk = await hasCommand("wrk");
  const script = await Deno.makeTempFile({ suffix: ".lua" });
  await Deno.writeTextFile(script, luaScript(bodies, false));

  // Warm both up.
  for (const s of Object.values(servers)) {
    for (const b of bodies) await post(s, JSON.parse(b).state);
  }
  const latency: Record<string, number[][]> = { before: [], now: [] };
  const rps: Record<string, number[]> = { before: [], now: [] };
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0
      ? (["before", "now"] as const)
      : (["now", "before"] as const);
    for (const side of order) {
      const samples: number[] = [];
      for (const t of texts) {
        samples.push((await post(servers[side], t)).latency_us as number);
      }
      latency[side]!.push(samples.sort((a, b) => a - b));
      if (withWrk) {
        const run = await runWrk(
          `${servers[side].base}/v1/decide`,
          script,
          seconds,
          connections,
        );
        rps[side]!.push(run.rps);
      }
    }
  }
  await Deno.remove(script);

  const median = (xs: readonly number[]) => xs[Math.floor(xs.length / 2)]!;
  const p99 = (xs: readonly number[]) => xs[Math.floor(xs.length * 0.99)]!;
  const all = (side: string) => latency[side]!.flat().sort((a, b) => a - b);
  const mean = (xs: readonly number[]) =>
    xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(
    `now (this checkout) against before (${before}), bundle ${bundle}; ${texts.length} table-${
      values.uncertified ? "uncertified" : "certified"
    } BANKING77 test texts; ${rounds} alternating rounds`,
  );
  for (const side of ["before", "now"]) {
    console.log(
      `${side.padEnd(7)} latency_us sequential median ${
        median(all(side)).toFixed(1)
      }, p99 ${p99(all(side)).toFixed(1)}${
        withWrk
          ? `; /v1/decide ${
            mean(rps[side]!).toFixed(0)
          } requests/s (wrk -c${connections}, ${seconds} s a round)`
          : ""
      }`,
    );
  }
  const perRound = latency.now!.map((xs, i) =>
    (median(xs) / median(latency.before![i]!)).toFixed(2)
  );
  console.log(
    `now/before: sequential latency_us median ${
      (median(all("now")) / median(all("before"))).toFixed(2)
    }x (rounds ${perRound.join(", ")})${
      withWrk
        ? `, requests/s ${
          (mean(rps.now!) / mean(rps.before!)).toFixed(2)
        }x (rounds ${
          rps.now!.map((x, i) => (x / rps.before![i]!).toFixed(2)).join(", ")
        })`
        : "; wrk not installed: no throughput"
    }`,
  );
} finally {
  await Promise.all(Object.values(servers).map((s) => s.stop()));
}

/** One `/v1/decide` request for `text`, its reply parsed. */
async function post(
  s: ServeProcess,
  text: string,
): Promise<Record<string, unknown>> {
  const r = await fetch(`${s.base}/v1/decide`, {
    method: "POST",
    body: JSON.stringify({ state: text }),
  });
  return await r.json();
}
