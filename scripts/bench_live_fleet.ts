/**
 * The fleet part of `deno task bench:live --replicas N` (issue 23): N
 * `main.ts serve` replicas sharing `--audit-key-file` and `--live-store`
 * on a local `redis-server`, against one lone replica, measured side by
 * side in one run:
 *
 * - Signing an audit id: `node:crypto` HMAC (what the decision route uses,
 *   synchronous) against WebCrypto's `crypto.subtle.sign` (a promise).
 * - The request path: `wrk` on `/v1/decide` of one fleet replica against a
 *   lone replica (audits are a small share of decisions; the store is not
 *   on a decision's path).
 * - Feedback: server round trip of `/v1/feedback` with one audit, and with
 *   100, on a fleet replica (the store's script) against a lone one.
 * - The shifted stream: decisions round-robin over the replicas, every
 *   feedback item to another replica, against the same stream through one
 *   lone replica: audits missed, the threshold of every replica at the end,
 *   the second half's certified share and disagreement, and the request at
 *   which each first moved the bundle's threshold.
 *
 * @module
 */

import { createHmac } from "node:crypto";
import { DecisionClient } from "../src/client/mod.ts";
import { hmacSigner } from "../src/live/audit_token.ts";
import {
  hasCommand,
  type ServeProcess,
  startRedis,
  startServe,
} from "./processes.ts";
import { percent } from "../src/format.ts";

const KEY = "bench audit key of the fleet, 32B";

/** Microseconds per id: HMAC-SHA256 through node:crypto and through WebCrypto. */
async function signingCost(): Promise<void> {
  const key = new TextEncoder().encode(KEY);
  const payload = crypto.getRandomValues(new Uint8Array(41));
  const n = 50_000;
  for (let round = 0; round < 2; round++) {
    let t = performance.now();
    for (let i = 0; i < n; i++) {
      payload[40] = i & 255;
      createHmac("sha256", key).update(payload).digest();
    }
    const fresh = (performance.now() - t) * 1000 / n;
    const signer = hmacSigner([key]);
    t = performance.now();
    for (let i = 0; i < n; i++) {
      payload[40] = i & 255;
      signer.sign(payload);
    }
    const node = (performance.now() - t) * 1000 / n;
    const k = await crypto.subtle.importKey(
      "raw",
      key,
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    t = performance.now();
    for (let i = 0; i < n; i++) {
      payload[40] = i & 255;
      await crypto.subtle.sign("HMAC", k, payload);
    }
    const web = (performance.now() - t) * 1000 / n;
    if (round === 1) {
      console.log(
        `  signing an audit id: node:crypto with keyed states copied ${
          node.toFixed(2)
        } us (synchronous; what serve uses), a fresh createHmac ${
          fresh.toFixed(2)
        } us, crypto.subtle.sign ${
          web.toFixed(2)
        } us (awaited); at audit rate 0.05 the id costs ${
          (node * 0.05).toFixed(3)
        } us per certified decision`,
      );
    }
  }
}

/** Requests per second of `wrk` on `/v1/decide` of `base`. */
async function decideRate(base: string, work: string): Promise<number> {
  const script = `${work}/fleet-decide.lua`;
  await Deno.writeTextFile(
    script,
    `wrk.method = "POST"\nwrk.body = '{"state": "my card has not arrived yet"}'\nwrk.headers["Content-Type"] = "application/json"\n`,
  );
  const out = await new Deno.Command("wrk", {
    args: ["-t1", "-c16", "-d6s", "-s", script, `${base}/v1/decide`],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const raw = new TextDecoder().decode(out.stdout);
  return Number(raw.match(/Requests\/sec:\s+([\d.]+)/)?.[1] ?? NaN);
}

/** Microseconds per `/v1/feedback` request carrying `batch` fresh audits of `base`. */
async function feedbackRate(base: string, batch: number): Promise<number> {
  const text = "my card has not arrived yet";
  const ids: string[] = [];
  const want = batch === 1 ? 400 : 1000;
  while (ids.length < want) {
    const res = await fetch(`${base}/v1/decide`, {
      method: "POST",
      body: JSON.stringify({ state: text }),
    });
    const json = await res.json();
    for (const a of Object.values(json.answers) as { audit?: string }[]) {
      if (a.audit !== undefined) ids.push(a.audit);
    }
  }
  const health = await (await fetch(`${base}/v1/health`)).json();
  const question = health.questions[0] as string;
  const requests = Math.floor(ids.length / batch);
  const start = performance.now();
  for (let r = 0; r < requests; r++) {
    const items = ids.slice(r * batch, (r + 1) * batch).map((audit) => ({
      question,
      state: text,
      answer: "card_arrival",
      audit,
    }));
    const res = await fetch(`${base}/v1/feedback`, {
      method: "POST",
      body: JSON.stringify(items),
    });
    await res.body?.cancel();
  }
  return (performance.now() - start) * 1000 / requests;
}

/** What one stream through some replicas gave. */
interface FleetStream {
  certifiedShare: number;
  disagreement: number;
  audits: number;
  missed: Record<string, number>;
  thresholds: (number | null)[];
  firstMove: number | null;
  moves: string[];
}

/**
 * Replays `texts` through `replicas`: decision `i` on replica `i mod N`,
 * its feedback on replica `i + 1 mod N` (the same replica when alone).
 */
async function replayFleet(
  replicas: readonly ServeProcess[],
  texts: readonly string[],
  labels: readonly string[],
): Promise<FleetStream> {
  let i = 0;
  let label = "";
  const missed: Record<string, number> = {};
  const route = (path: string) => {
    const n = replicas.length;
    const at = path.endsWith("/v1/feedback") ? (i + 1) % n : i % n;
    return replicas[at]!.base + path.slice(path.indexOf("/v1/"));
  };
  const client = new DecisionClient({
    url: "http://fleet",
    model: () => label,
    fetch: async (input, init) => {
      const res = await fetch(route(String(input)), init);
      if (String(input).endsWith("/v1/feedback") && res.ok) {
        const json = await res.clone().json();
        for (const m of json.missed_audits as { reason: string }[]) {
          missed[m.reason] = (missed[m.reason] ?? 0) + 1;
        }
      }
      return res;
    },
    onFeedbackError: (e) => {
      missed[`error: ${e.message}`] = (missed[`error: ${e.message}`] ?? 0) + 1;
    },
  });
  const half = texts.length >> 1;
  let certified = 0;
  let wrong = 0;
  let audits = 0;
  let firstMove: number | null = null;
  let last = "";
  const moves: string[] = [];
  for (i = 0; i < texts.length; i++) {
    label = labels[i]!;
    const answers = await client.decide(texts[i]!);
    const a = Object.values(answers)[0]!;
    if (a.audited) audits++;
    if (i >= half && a.certified) {
      certified++;
      if (a.table !== label) wrong++;
    }
    if (i % 1000 === 999 || i === texts.length - 1) {
      const stats = await (await fetch(`${replicas[0]!.base}/v1/stats`))
        .json();
      const q = Object.values(stats.live.questions)[0] as {
        reason: string;
        threshold: number | null;
        summary: string;
      };
      const now = `${q.reason} ${q.threshold}`;
      if (now !== last) {
        if (last !== "" && firstMove === null) firstMove = i;
        moves.push(`request ${i + 1}: ${q.summary}`);
        last = now;
      }
    }
  }
  await new Promise((r) => setTimeout(r, 600));
  const thresholds: (number | null)[] = [];
  for (const r of replicas) {
    const stats = await (await fetch(`${r.base}/v1/stats`)).json();
    const q = Object.values(stats.live.questions)[0] as {
      threshold: number | null;
    };
    thresholds.push(q.threshold);
  }
  const n = texts.length - half;
  return {
    certifiedShare: certified / n,
    disagreement: certified === 0 ? 0 : wrong / certified,
    audits,
    missed,
    thresholds,
    firstMove,
    moves,
  };
}

function describeStream(name: string, r: FleetStream, alpha: number): void {
  const missed = Object.entries(r.missed).map(([k, v]) => `${v} ${k}`);
  console.log(
    `  ${name}: second half certified ${percent(r.certifiedShare)} at ${
      percent(r.disagreement)
    } disagreement (targets <= ${
      percent(alpha)
    }, >= 70%); ${r.audits} audits, missed: ${
      missed.length === 0 ? "none" : missed.join(", ")
    }; thresholds at the end: ${
      r.thresholds.map((t) => t === null ? "withdrawn" : t.toFixed(3)).join(
        ", ",
      )
    }${
      new Set(r.thresholds).size === 1 ? " (one threshold)" : " (DIFFERENT)"
    }; first move at request ${r.firstMove ?? "never"}`,
  );
  for (const m of r.moves) console.log(`    ${m}`);
}

/** Options of `benchFleet`. */
export interface FleetBenchOptions {
  replicas: number;
  /** The plain bundle (request-path and feedback costs). */
  plain: string;
  /** The shifted bundle and its stream. */
  shifted: string;
  texts: readonly string[];
  labels: readonly string[];
  auditRate: number;
  alpha: number;
  work: string;
}

/** Runs the fleet benchmark (see the module doc). */
export async function benchFleet(o: FleetBenchOptions): Promise<void> {
  console.log(`\n== Fleet: ${o.replicas} replicas sharing a live store`);
  await signingCost();
  if (!(await hasCommand("redis-server"))) {
    console.log(
      "  skipped the rest: redis-server is not installed (apt-get install redis-server)",
    );
    return;
  }
  const key = `${o.work}/audit.key`;
  await Deno.writeTextFile(key, KEY);
  const redis = await startRedis();
  const fleetArgs = (name: string) => [
    "--audit-rate",
    String(o.auditRate),
    "--audit-seed",
    "7",
    "--audit-key-file",
    key,
    "--live-store",
    redis.url,
    "--replica",
    name,
  ];
  const loneArgs = ["--audit-rate", String(o.auditRate), "--audit-seed", "7"];
  try {
    // Request path and feedback, side by side, twice.
    const lone = await startServe(o.plain, loneArgs, {
      read: `${o.plain},${key}`,
    });
    const fleet: ServeProcess[] = [];
    for (let r = 0; r < o.replicas; r++) {
      fleet.push(
        await startServe(o.plain, fleetArgs(`r${r + 1}`), {
          read: `${o.plain},${key}`,
        }),
      );
    }
    try {
      if (await hasCommand("wrk")) {
        const rates: [number, number][] = [];
        for (let round = 0; round < 2; round++) {
          rates.push([
            await decideRate(lone.base, o.work),
            await decideRate(fleet[0]!.base, o.work),
          ]);
        }
        const [l, f] = rates.reduce((a, b) => [a[0] + b[0], a[1] + b[1]]);
        console.log(
          `  /v1/decide (wrk, 16 connections, 2 x 6 s each, audit rate ${o.auditRate}): lone replica ${
            (l / 2).toFixed(0)
          } req/s, fleet replica ${(f / 2).toFixed(0)} req/s (ratio ${
            (f / l).toFixed(3)
          }; target >= 0.95)`,
        );
      } else console.log("  skipped /v1/decide: wrk is not installed");
      for (const batch of [1, 100]) {
        const l = await feedbackRate(lone.base, batch);
        const f = await feedbackRate(fleet[1 % fleet.length]!.base, batch);
        console.log(
          `  /v1/feedback with ${batch} audit${
            batch === 1 ? "" : "s"
          } per request: lone ${l.toFixed(0)} us, fleet ${
            f.toFixed(0)
          } us per request (the store's script adds ${(f - l).toFixed(0)} us; ${
            ((f - l) / batch).toFixed(1)
          } us per audit)`,
        );
      }
    } finally {
      await lone.stop();
      await Promise.all(fleet.map((p) => p.stop()));
    }

    // The shifted stream: the fleet against one replica with the same traffic.
    console.log(
      `\n== Fleet on the shifted stream: ${o.texts.length} requests at audit rate ${o.auditRate}, decisions round-robin over ${o.replicas} replicas, each feedback item to another replica`,
    );
    const replicas: ServeProcess[] = [];
    for (let r = 0; r < o.replicas; r++) {
      replicas.push(
        await startServe(o.shifted, fleetArgs(`s${r + 1}`), {
          read: `${o.shifted},${key}`,
        }),
      );
    }
    let t0 = performance.now();
    let result: FleetStream;
    try {
      result = await replayFleet(replicas, o.texts, o.labels);
    } finally {
      await Promise.all(replicas.map((p) => p.stop()));
    }
    describeStream(
      `fleet of ${o.replicas} (${
        ((performance.now() - t0) / 1000).toFixed(0)
      } s)`,
      result,
      o.alpha,
    );
    const alone = await startServe(o.shifted, loneArgs);
    t0 = performance.now();
    try {
      result = await replayFleet([alone], o.texts, o.labels);
    } finally {
      await alone.stop();
    }
    describeStream(
      `one replica (${((performance.now() - t0) / 1000).toFixed(0)} s)`,
      result,
      o.alpha,
    );
  } finally {
    await redis.stop();
  }
}
