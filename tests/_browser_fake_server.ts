/**
 * A stand-in for the real server, for working on the dashboard without a
 * trained bundle: serves `dashboardHtml` at `/`, a made-up but well-shaped
 * `/v1/stats` that moves as `/v1/decide` is called, and `/v1/playground`.
 *
 * Run it to look at the page: `deno run --allow-net tests/_browser_fake_server.ts`
 * (add `--traffic` for a steady stream of made-up decisions).
 *
 * @module
 */

import { dashboardHtml } from "../static/mod.ts";

/** How the stand-in behaves. */
export interface FakeServerOptions {
  /** Port to listen on; 0 picks a free one. */
  port?: number;
  /** When set, every route but health asks for this token (Basic password, bearer or header). */
  token?: string;
  /** Whether recent decisions carry their text. */
  keepText?: boolean;
  /** Pretend the savings flags were given. */
  savings?: boolean;
}

const INTENTS = [
  "card_lost",
  "refund",
  "balance",
  "transfer_failed",
  "exchange_rate",
];
const FLAGS = ["low_confidence", "drift", "low_radius"] as const;

/** Starts the stand-in; close it with `server.shutdown()`. */
export function startFakeServer(
  opts: FakeServerOptions = {},
): Deno.HttpServer<Deno.NetAddr> {
  const started = new Date();
  const counts = {
    requests: 0,
    answers: 0,
    certified: 0,
    deferred: 0,
    errors: 0,
    playground: 0,
  };
  const perQ: Record<
    string,
    { answers: number; certified: number; flags: Record<string, number> }
  > = {
    intent: { answers: 0, certified: 0, flags: {} },
    wants_human: { answers: 0, certified: 0, flags: {} },
  };
  const reasons: Record<string, number> = {};
  const recent: Record<string, unknown>[] = [];
  const latencies: number[] = [];
  const stamps: number[] = [];
  let seed = 7;
  const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;

  function decide(text: string): void {
    counts.requests++;
    stamps.push(Date.now());
    latencies.push(8 + rnd() * 10 + (rnd() < 0.05 ? 40 : 0));
    for (const q of Object.keys(perQ)) {
      const pq = perQ[q]!;
      const certified = rnd() < 0.82;
      const flag = certified
        ? null
        : FLAGS[Math.floor(rnd() * (rnd() < 0.7 ? 1 : 3))]!;
      counts.answers++;
      pq.answers++;
      if (certified) {
        counts.certified++;
        pq.certified++;
      } else {
        counts.deferred++;
        pq.flags[flag!] = (pq.flags[flag!] ?? 0) + 1;
        reasons[flag!] = (reasons[flag!] ?? 0) + 1;
      }
      const row: Record<string, unknown> = {
        at: new Date().toISOString(),
        route: "/v1/decide",
        question: q,
        answer: q === "intent"
          ? INTENTS[Math.floor(rnd() * INTENTS.length)]
          : rnd() < 0.3,
        confidence: certified ? 0.9 + rnd() * 0.1 : 0.4 + rnd() * 0.4,
        certified,
        flag,
        radius: rnd() < 0.1 ? null : 1 + Math.floor(rnd() * 5),
      };
      if (opts.keepText) row.text = text;
      recent.push(row);
    }
    if (recent.length > 50) recent.splice(0, recent.length - 50);
  }

  function pct(p: number): number | null {
    if (!latencies.length) return null;
    const s = [...latencies].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  }

  function stats(): unknown {
    const now = Date.now();
    const recentStamps = stamps.filter((t) => now - t < 10_000).length;
    const calls = counts.certified;
    return {
      started_at: started.toISOString(),
      uptime_s: (now - started.getTime()) / 1000,
      bundle: {
        path: "demo/bundle",
        questions: [
          {
            name: "intent",
            kind: "choice",
            options: INTENTS,
            threshold: 0.873,
            alpha: 0.05,
          },
          {
            name: "wants_human",
            kind: "yes_no",
            options: ["true", "false"],
            threshold: 0.91,
            alpha: 0.05,
          },
        ],
      },
      keep_text: !!opts.keepText,
      counts,
      share_answered: counts.answers ? counts.certified / counts.answers : null,
      per_question: Object.fromEntries(
        Object.entries(perQ).map((
          [k, v],
        ) => [k, {
          ...v,
          share_answered: v.answers ? v.certified / v.answers : null,
        }]),
      ),
      deferral_reasons: reasons,
      latency_us: {
        count: latencies.length,
        p50: pct(0.5),
        p90: pct(0.9),
        p99: pct(0.99),
        max: pct(1),
      },
      rate: { requests_per_s: recentStamps / 10 },
      savings: opts.savings
        ? {
          llm_latency_ms: 850,
          cost_per_call: 0.002,
          calls_saved: calls,
          time_saved_s: calls * 0.85,
          money_saved: calls * 0.002,
        }
        : {
          llm_latency_ms: null,
          cost_per_call: null,
          calls_saved: calls,
          time_saved_s: null,
          money_saved: null,
        },
      drift: {
        intent: {
          status: "quiet",
          observed: perQ.intent!.answers,
          alarmed_at: null,
          since: null,
          evidence: 1 + rnd() * 3,
          alarm_level: 100,
          alarms: 0,
          clears: 0,
        },
        wants_human: {
          status: counts.requests > 30 ? "alarmed" : "quiet",
          observed: perQ.wants_human!.answers,
          alarmed_at: counts.requests > 30 ? 31 : null,
          since: counts.requests > 30 ? started.toISOString() : null,
          evidence: counts.requests > 30 ? 140 : 12,
          alarm_level: 100,
          alarms: counts.requests > 30 ? 1 : 0,
          clears: 0,
        },
      },
      recent,
    };
  }

  function authorized(req: Request): boolean {
    if (!opts.token) return true;
    const h = req.headers.get("authorization") ?? "";
    if (h === `Bearer ${opts.token}`) return true;
    if (req.headers.get("x-service-token") === opts.token) return true;
    if (h.startsWith("Basic ")) {
      const raw = atob(h.slice(6));
      return raw.slice(raw.indexOf(":") + 1) === opts.token;
    }
    return false;
  }

  const json = (body: unknown, status = 200) => Response.json(body, { status });

  return Deno.serve({
    port: opts.port ?? 0,
    hostname: "127.0.0.1",
    onListen() {},
  }, async (req) => {
    const url = new URL(req.url);
    if (url.pathname === "/v1/health") {
      return json({ ok: true, questions: ["intent", "wants_human"] });
    }
    if (!authorized(req)) {
      return new Response("login needed", {
        status: 401,
        headers: {
          "www-authenticate": 'Basic realm="decision table", charset="UTF-8"',
        },
      });
    }
    if (url.pathname === "/" && req.method === "GET") {
      return new Response(dashboardHtml, {
        headers: { "content-type": "text/html; charset=utf-8" },
      });
    }
    if (url.pathname === "/v1/stats") return json(stats());
    if (url.pathname === "/v1/decide" && req.method === "POST") {
      const body = await req.json().catch(() => null);
      if (!body || typeof body.state !== "string") {
        counts.errors++;
        return json({ error: 'Send {"state": "..."}' }, 400);
      }
      decide(body.state);
      return json({ answers: {}, latency_us: 12 });
    }
    if (url.pathname === "/v1/playground" && req.method === "POST") {
      const body = await req.json().catch(() => null);
      if (!body || typeof body.text !== "string") {
        return json({ error: '"text" must be a string' }, 400);
      }
      counts.playground++;
      const q = body.question ?? "intent";
      if (!(q in perQ)) return json({ error: `Unknown question "${q}"` }, 400);
      const empty = body.text.trim() === "";
      return json({
        question: q,
        answer: q === "intent" ? "card_lost" : false,
        confidence: empty ? 0.2 : 0.942,
        threshold: 0.873,
        alpha: 0.05,
        certified: !empty,
        flag: empty ? "empty_input" : null,
        reason: empty
          ? "Not certified: the text is empty, and an empty text is never served."
          : "Certified: confidence 94.2% reaches the threshold 87.3%.",
        radius: 3,
        top: [
          { option: "card_lost", probability: 0.942 },
          { option: "refund", probability: 0.031 },
          { option: "balance", probability: 0.012 },
        ],
      });
    }
    return json({ error: "not found" }, 404);
  });
}

if (import.meta.main) {
  const server = startFakeServer({
    port: 8099,
    keepText: Deno.args.includes("--keep-text"),
    savings: Deno.args.includes("--savings"),
  });
  console.log(`Stand-in dashboard on http://127.0.0.1:${server.addr.port}/`);
  if (Deno.args.includes("--traffic")) {
    setInterval(() => {
      fetch(`http://127.0.0.1:${server.addr.port}/v1/decide`, {
        method: "POST",
        body: JSON.stringify({ state: "where is my card" }),
      }).then((r) => r.body?.cancel());
    }, 300);
  }
}
