/**
 * Both tiers served, measured on a real `serve` process: a format-4
 * bundle (its second tier on), BANKING77 test texts sorted in this
 * process by what the table does with them (certified, or withheld for
 * low confidence alone: the second tier's texts). Prints
 *
 * - side by side with the same bundle served by the table alone
 *   (`--semantic-workers 0`), in alternating rounds on texts both
 *   certify: the table-certified answers' sequential `latency_us`
 *   (target: median <= 12 us, and no slower than the table alone) and
 *   requests a second from 16 concurrent clients;
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
import { Answerer, QUIET_GUARD } from "../src/engine/mod.ts";
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

/**
 * Sorts the test texts by what the table does with them, as a server with
 * the second tier does (`certified`, `second`), and the texts the table
 * certifies both with the second tier served and alone (`both`: the
 * side-by-side texts).
 */
async function sortTexts(
  bundle: string,
  testCsv: string,
): Promise<
  { certified: string[]; second: string[]; both: string[]; question: string }
> {
  const table = await loadBundle(bundle);
  const q = table.questions.find((x) => x.semantic !== undefined);
  if (q === undefined) throw new Error(`${bundle} has no second tier`);
  const tiered = new Answerer(table, { secondTier: true });
  const alone = new Answerer(table);
  const rows = parse(await Deno.readTextFile(testCsv), {
    columns: true,
  }) as { text: string }[];
  const certified: string[] = [];
  const second: string[] = [];
  const both: string[] = [];
  for (const { text } of rows) {
    const a = tiered.answer(tiered.prepare(text), q.name, {}, QUIET_GUARD);
    if (a.answer.certified) certified.push(text);
    else if (tiered.asksSecondTier(a, false)) second.push(text);
    const b = alone.answer(alone.prepare(text), q.name, {}, QUIET_GUARD);
    if (a.answer.certified && b.answer.certified) both.push(text);
  }
  return { certified, second, both, question: q.name };
}

/** A `serve` process of the benchmark. */
interface Served {
  base: string;
  pid: number;
  startMs: number;
  stop(): Promise<void>;
}

/** Starts `serve` on `o.bundle` with `workers` encoder workers (0: the table alone). */
async function startServe(o: TiersOptions, workers: number): Promise<Served> {
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
      String(workers),
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
  const stop = async () => {
    try {
      server.kill("SIGTERM");
    } catch { /* gone */ }
    await server.status;
  };
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
    return { base: `http://127.0.0.1:${port}`, pid: server.pid, startMs, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/**
 * The table-certified texts `both` sent to the server with the second tier
 * (`tiered`) and to the same bundle served by the table alone (`alone`),
 * side by side in alternating rounds: sequential `latency_us`, and
 * requests a second from 16 concurrent clients.
 */
async function sideBySide(
  tiered: Served,
  alone: Served,
  question: string,
  both: readonly string[],
): Promise<void> {
  const sides = [["tiered", tiered], ["alone", alone]] as const;
  const seq = { tiered: [] as number[], alone: [] as number[] };
  const rates = { tiered: [] as number[], alone: [] as number[] };
  let at = 0;
  for (let round = 0; round < 4; round++) {
    for (
      const [side, served] of round % 2 === 0 ? sides : [...sides].reverse()
    ) {
      for (let i = 0; i < 500; i++) {
        const r = await decide(
          served.base,
          question,
          both[at++ % both.length]!,
        );
        if (!r.certified) throw new Error("expected a certified answer");
        seq[side].push(r.latencyUs);
      }
    }
  }
  for (let round = 0; round < 4; round++) {
    // Each goes first in every other round (the first of a pair meets the
    // other's leftovers: garbage, a cooler cache).
    for (
      const [side, served] of round % 2 === 0 ? sides : [...sides].reverse()
    ) {
      const t0 = performance.now();
      const end = t0 + 2000;
      let done = 0;
      await Promise.all(
        Array.from({ length: 16 }, async (_, c) => {
          for (let i = c; performance.now() < end; i += 16) {
            await decide(served.base, question, both[i % both.length]!);
            done++;
          }
        }),
      );
      rates[side].push(done / ((performance.now() - t0) / 1000));
    }
  }
  const median = (xs: number[]) => quantile(sortedNumbers(xs), 0.5);
  const p99 = (xs: number[]) => quantile(sortedNumbers(xs), 0.99);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(
    `tiers: table-certified texts, 2,000 sequential requests each, 4 rounds, in turn first: latency_us median ${
      median(seq.tiered).toFixed(1)
    } us with the second tier served, ${
      median(seq.alone).toFixed(1)
    } us by the table alone (${
      (median(seq.tiered) / median(seq.alone)).toFixed(2)
    }x; p99 ${p99(seq.tiered).toFixed(1)} and ${
      p99(seq.alone).toFixed(1)
    } us; target median <= 12 us)`,
  );
  console.log(
    `tiers: table-certified texts, 16 concurrent clients, 4 rounds of 2 s each, in turn first: ${
      mean(rates.tiered).toFixed(0)
    } requests/s with the second tier served, ${
      mean(rates.alone).toFixed(0)
    } by the table alone (${
      (mean(rates.tiered) / mean(rates.alone)).toFixed(2)
    }x; per round ${
      rates.tiered.map((r, i) => (r / rates.alone[i]!).toFixed(2)).join(", ")
    })`,
  );
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
  const server = await startServe(o, o.workers);
  const alone = await startServe(o, 0);
  try {
    const base = server.base;
    console.log(
      `tiers: serve started with ${o.workers} encoder workers in ${
        (server.startMs / 1000).toFixed(1)
      } s (queue ${o.queue}); resident memory ${
        (await rssMb(server.pid))?.toFixed(1)
      } MB (the same bundle by the table alone: ${
        (await rssMb(alone.pid))?.toFixed(1)
      } MB)`,
    );
    await sideBySide(server, alone, texts.question, texts.both);
    console.log(
      `tiers: resident memory after them: ${
        (await rssMb(server.pid))?.toFixed(1)
      } MB with the second tier served, ${
        (await rssMb(alone.pid))?.toFixed(1)
      } MB by the table alone`,
    );
    await alone.stop();

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
    await alone.stop();
    await server.stop();
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
