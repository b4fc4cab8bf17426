/**
 * Both tiers served, measured on a real `serve` process: a format-4
 * bundle (its second tier on), BANKING77 test texts sorted in this
 * process by what the table does with them (certified, or withheld for
 * low confidence alone: the second tier's texts). Prints
 *
 * - the table-certified answers' `latency_us` for 2,000 sequential
 *   requests (target: median <= 12 us), with the second tier loaded;
 * - an open-loop load of second-tier texts at 40 requests a second (and a
 *   stream of table-certified texts beside it): the second tier's
 *   `latency_us` p50 / p99 (targets 20 ms / 60 ms) and the table-certified
 *   answers' round trip p99 meanwhile;
 * - the same at ten times the rate: errors, shed requests, the largest
 *   resident memory (target <= 400 MB) and the table-certified p99
 *   (target <= 1 ms).
 *
 * The server runs with `--drift-delta 1e-12`: a stream of only uncertain
 * texts is a drift its online test alarms on, which would keep them from
 * the second tier.
 *
 * Usage: deno task bench:tiers --bundle DIR [--data DIR] [--seconds 15]
 *        [--workers 1] [--queue 16]
 * (`deno task bench:http --tiers-bundle DIR` runs it after its own
 * figures.) Without a bundle of format 4 or the test texts, prints why and
 * exits 0. Train one with `train --semantic on` (about 6 minutes on
 * BANKING77's 10,003 texts on 2 cores). Only 127.0.0.1 is used.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { parse } from "csv-parse/sync";
import { loadBundle } from "../src/bundle/mod.ts";
import {
  assess,
  prepareText,
  QUIET_GUARD,
  setThresholdInForce,
  TableState,
} from "../src/engine/mod.ts";
import { SERVE_V8_FLAGS } from "../src/cli/serve.ts";
import { freePort, rssMbOrNull as rssMb } from "./processes.ts";

const ROOT = new URL("../", import.meta.url);
const MAIN = new URL("main.ts", ROOT).pathname;
const ENCODER_SOURCE = new URL("src/encoder", ROOT).pathname;

/** What `benchTiers` is given. */
export interface TiersOptions {
  bundle: string;
  data: string;
  seconds: number;
  workers: number;
  queue: number;
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function sortedNumbers(xs: readonly number[]): number[] {
  return [...xs].sort((a, b) => a - b);
}

/** Sorts the test texts by what the table does with them, as a server with the second tier does. */
async function sortTexts(
  bundle: string,
  testCsv: string,
): Promise<{ certified: string[]; second: string[]; question: string }> {
  const table = await loadBundle(bundle);
  const q = table.questions.find((x) => x.semantic !== undefined);
  if (q === undefined) throw new Error(`${bundle} has no second tier`);
  const state = new TableState(table);
  setThresholdInForce(table, state, q.name, q.semantic!.calibration.threshold);
  const rows = parse(await Deno.readTextFile(testCsv), {
    columns: true,
  }) as { text: string }[];
  const certified: string[] = [];
  const second: string[] = [];
  for (const { text } of rows) {
    const a = assess(
      table,
      state,
      prepareText(table, state, text),
      q.name,
      {},
      QUIET_GUARD,
    ).answer;
    if (a.certified) certified.push(text);
    else if (a.flag === "low_confidence") second.push(text);
  }
  return { certified, second, question: q.name };
}

interface Reply {
  ok: boolean;
  tier: string | null;
  certified: boolean;
  latencyUs: number;
  roundTripMs: number;
}

async function decide(
  base: string,
  question: string,
  text: string,
): Promise<Reply> {
  const t = performance.now();
  try {
    const res = await fetch(`${base}/v1/decide`, {
      method: "POST",
      body: JSON.stringify({ state: text, questions: { [question]: null } }),
    });
    const json = await res.json();
    const a = json.answers?.[question];
    return {
      ok: res.status === 200,
      tier: a?.tier ?? null,
      certified: a?.certified === true,
      latencyUs: json.latency_us ?? NaN,
      roundTripMs: performance.now() - t,
    };
  } catch {
    return {
      ok: false,
      tier: null,
      certified: false,
      latencyUs: NaN,
      roundTripMs: performance.now() - t,
    };
  }
}

/**
 * Sends `rate` second-tier texts a second (open loop: on time whatever
 * the replies) and `tableRate` table-certified ones beside them for
 * `seconds`; samples the server's RSS every half second.
 */
async function openLoop(
  base: string,
  pid: number,
  question: string,
  texts: { certified: string[]; second: string[] },
  rate: number,
  tableRate: number,
  seconds: number,
): Promise<{ second: Reply[]; table: Reply[]; maxRssMb: number }> {
  const second: Promise<Reply>[] = [];
  const table: Promise<Reply>[] = [];
  let maxRss = 0;
  const sampler = setInterval(async () => {
    const r = await rssMb(pid);
    if (r !== null && r > maxRss) maxRss = r;
  }, 500);
  const start = performance.now();
  const end = start + seconds * 1000;
  let sent = 0;
  let sentTable = 0;
  while (performance.now() < end) {
    const elapsed = (performance.now() - start) / 1000;
    while (sent < elapsed * rate) {
      second.push(
        decide(base, question, texts.second[sent % texts.second.length]!),
      );
      sent++;
    }
    while (sentTable < elapsed * tableRate) {
      table.push(
        decide(
          base,
          question,
          texts.certified[sentTable % texts.certified.length]!,
        ),
      );
      sentTable++;
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  const out = {
    second: await Promise.all(second),
    table: await Promise.all(table),
  };
  clearInterval(sampler);
  return { ...out, maxRssMb: maxRss };
}

function summary(label: string, replies: readonly Reply[]): string {
  const errors = replies.filter((r) => !r.ok).length;
  const us = sortedNumbers(replies.filter((r) => r.ok).map((r) => r.latencyUs));
  const rt = sortedNumbers(
    replies.filter((r) => r.ok).map((r) => r.roundTripMs),
  );
  const semantic = replies.filter((r) => r.tier === "semantic").length;
  return `${label}: ${replies.length} requests, ${errors} errors, ${semantic} answered by the second tier; latency_us p50 ${
    (quantile(us, 0.5) / 1000).toFixed(2)
  } ms, p99 ${(quantile(us, 0.99) / 1000).toFixed(2)} ms; round trip p50 ${
    quantile(rt, 0.5).toFixed(2)
  } ms, p99 ${quantile(rt, 0.99).toFixed(2)} ms`;
}

/** Runs the benchmark (see the module doc); prints its figures. */
export async function benchTiers(o: TiersOptions): Promise<void> {
  const testCsv = `${o.data.replace(/\/$/, "")}/banking77/test.csv`;
  try {
    await Deno.stat(testCsv);
  } catch {
    console.log(`tiers: skipped: no BANKING77 test texts at ${testCsv}`);
    return;
  }
  const texts = await sortTexts(o.bundle, testCsv);
  console.log(
    `tiers: bundle ${o.bundle}, question ${texts.question}; of the test texts ${texts.certified.length} are certified by the table, ${texts.second.length} withheld for low confidence alone (the second tier's)`,
  );
  const port = freePort();
  const server = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      `--v8-flags=${SERVE_V8_FLAGS}`,
      `--allow-net=127.0.0.1:${port}`,
      `--allow-read=${o.bundle},${ENCODER_SOURCE}`,
      "--allow-env=SERVICE_PROXY_TOKEN",
      MAIN,
      "serve",
      "--bundle",
      o.bundle,
      "--port",
      String(port),
      "--semantic-workers",
      String(o.workers),
      "--semantic-queue",
      String(o.queue),
      // Only uncertain texts at 400 a second is a drift the online test
      // (rightly) alarms on, and then no text reaches the second tier: the
      // load is to measure the second tier, so the alarm is made rare.
      "--drift-delta",
      "1e-12",
    ],
    env: { SERVICE_PROXY_TOKEN: "" },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  try {
    const reader = server.stdout.pipeThrough(new TextDecoderStream())
      .getReader();
    let banner = "";
    const t0 = performance.now();
    while (!/listening on/.test(banner)) {
      const { done, value } = await reader.read();
      if (done) throw new Error(`serve ended: ${banner}`);
      banner += value;
    }
    const startMs = performance.now() - t0;
    (async () => {
      while (!(await reader.read()).done) { /* drain */ }
    })().catch(() => {});
    const base = `http://127.0.0.1:${port}`;
    console.log(
      `tiers: serve started with ${o.workers} encoder workers in ${
        (startMs / 1000).toFixed(1)
      } s (queue ${o.queue}); resident memory ${
        (await rssMb(server.pid))?.toFixed(1)
      } MB`,
    );

    // Sequential, table-certified texts.
    const seq: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const r = await decide(
        base,
        texts.question,
        texts.certified[i % texts.certified.length]!,
      );
      if (r.tier !== "table") throw new Error(`expected tier table: ${r.tier}`);
      seq.push(r.latencyUs);
    }
    const s = sortedNumbers(seq);
    console.log(
      `tiers: table-certified latency_us, 2000 sequential requests: median ${
        quantile(s, 0.5).toFixed(1)
      } us, p99 ${quantile(s, 0.99).toFixed(1)} us (target median <= 12 us)`,
    );

    for (const rate of [40, 400]) {
      const before = await (await fetch(`${base}/v1/stats`)).json();
      const r = await openLoop(
        base,
        server.pid,
        texts.question,
        texts,
        rate,
        100,
        o.seconds,
      );
      const after = await (await fetch(`${base}/v1/stats`)).json();
      const shed = after.tiers.semantic.shed - before.tiers.semantic.shed;
      console.log(
        summary(
          `tiers: ${rate} second-tier requests/s for ${o.seconds} s`,
          r.second,
        ) + `; shed ${shed}`,
      );
      console.log(
        summary(`tiers:   beside them, 100 table-certified/s`, r.table) +
          ` (target p99 <= 1 ms)`,
      );
      console.log(
        `tiers:   largest resident memory ${
          r.maxRssMb.toFixed(1)
        } MB (target <= 400 MB)`,
      );
    }
  } finally {
    try {
      server.kill("SIGTERM");
    } catch { /* gone */ }
    await server.status;
  }
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      bundle: { type: "string" },
      data: {
        type: "string",
        default: new URL("../../shared/data/", import.meta.url).pathname,
      },
      seconds: { type: "string", default: "15" },
      workers: { type: "string", default: "1" },
      queue: { type: "string", default: "16" },
    },
  });
  if (values.bundle === undefined) {
    console.log(
      "tiers: skipped: give --bundle DIR, a bundle trained with train --semantic on",
    );
  } else {
    await benchTiers({
      bundle: values.bundle,
      data: values.data,
      seconds: Number(values.seconds),
      workers: Number(values.workers),
      queue: Number(values.queue),
    });
  }
}
