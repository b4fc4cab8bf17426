/**
 * A seeded fuzz of a real server: random and mutated bodies on the JSON
 * routes, then random and mutated request heads (methods, paths, header
 * fields, framing) on every route, over keep-alive connections. The server
 * must answer every request, never with a 5xx, close a connection only
 * when its reply says so, stay up, and keep its counters consistent with
 * what the client saw.
 */

import assert from "node:assert/strict";
import { rng, tempDir } from "./_fixtures.ts";
import {
  getText,
  RawClient,
  rawPost,
  startServer,
  writeTestBundle,
} from "./_http_helpers.ts";

const ROUTES = [
  "/v1/decide",
  "/v1/decide/batch",
  "/v1/decisions",
  "/v1/altdecisions",
  "/v1/playground",
] as const;
const DECISION_ROUTES = new Set<string>([
  "/v1/decide",
  "/v1/decide/batch",
  "/v1/decisions",
  "/v1/altdecisions",
]);

const VALID: Record<string, unknown> = {
  "/v1/decide": {
    state: "my parcel is late",
    questions: { topic: { criteria: ["shipping", "billing"] } },
    exposed: true,
  },
  "/v1/decisions": {
    model: "m",
    input: "refund please",
    questions: [{
      type: "choice",
      name: "topic",
      instructions: "",
      choices: [{ value: "refund" }],
    }, {
      type: "noul",
      name: "urgent",
      instructions: "",
    }],
  },
  "/v1/altdecisions": {
    model: "m",
    state: "urgent login help",
    questions: {
      topic: { type: "choice", instructions: "", criteria: { account: "a" } },
      urgent: { type: "predicate", instructions: "" },
    },
  },
  "/v1/playground": { question: "topic", text: "invoice" },
};
VALID["/v1/decide/batch"] = {
  items: [VALID["/v1/decide"], { state: "invoice", top: 2 }],
};

function randomValue(random: () => number, depth = 0): unknown {
  const kind = Math.floor(random() * (depth > 3 ? 6 : 8));
  switch (kind) {
    case 0:
      return null;
    case 1:
      return random() < 0.5;
    case 2:
      return Math.floor(random() * 2000) - 1000;
    case 3:
      return random() * 1e6;
    case 4:
      return randomString(random);
    case 5:
      return [
        "topic",
        "urgent",
        "coin",
        "nope",
        "__proto__",
        "",
        "choice",
        "noul",
        "score",
      ][Math.floor(random() * 9)];
    case 6:
      return Array.from(
        { length: Math.floor(random() * 4) },
        () => randomValue(random, depth + 1),
      );
    default: {
      const o: Record<string, unknown> = {};
      for (let i = Math.floor(random() * 4); i > 0; i--) {
        o[randomKey(random)] = randomValue(random, depth + 1);
      }
      return o;
    }
  }
}

const KEYS = [
  "state",
  "input",
  "text",
  "question",
  "questions",
  "criteria",
  "choices",
  "type",
  "name",
  "value",
  "exposed",
  "top",
  "items",
  "model",
  "topic",
  "urgent",
  "x",
];

function randomKey(random: () => number): string {
  return random() < 0.8
    ? KEYS[Math.floor(random() * KEYS.length)]!
    : randomString(random);
}

function randomString(random: () => number): string {
  const alphabet = [
    "a",
    "b",
    " ",
    "é",
    "ß",
    "中",
    "\u0000",
    "\n",
    '"',
    "\\",
    "🙂",
    "invoice",
    "parcel",
    "\ud800",
  ];
  return Array.from(
    { length: Math.floor(random() * 12) },
    () => alphabet[Math.floor(random() * alphabet.length)]!,
  ).join("");
}

/** Replaces one value somewhere inside `value` by a random one. */
function mutate(random: () => number, value: unknown): unknown {
  if (value === null || typeof value !== "object" || random() < 0.25) {
    return randomValue(random);
  }
  const copy: Record<string, unknown> | unknown[] = Array.isArray(value)
    ? [...value]
    : { ...(value as Record<string, unknown>) };
  const keys = Object.keys(copy);
  if (keys.length === 0 || random() < 0.15) {
    (copy as Record<string, unknown>)[randomKey(random)] = randomValue(random);
    return copy;
  }
  const key = keys[Math.floor(random() * keys.length)]!;
  if (random() < 0.2) delete (copy as Record<string, unknown>)[key];
  else {(copy as Record<string, unknown>)[key] = mutate(
      random,
      (copy as Record<string, unknown>)[key],
    );}
  return copy;
}

function randomBody(random: () => number, route: string): string {
  const r = random();
  if (r < 0.55) return JSON.stringify(mutate(random, VALID[route]));
  if (r < 0.7) return JSON.stringify(randomValue(random));
  const valid = JSON.stringify(VALID[route]);
  if (r < 0.8) return valid.slice(0, Math.floor(random() * valid.length));
  if (r < 0.9) {
    const i = Math.floor(random() * valid.length);
    return valid.slice(0, i) + String.fromCharCode(Math.floor(random() * 128)) +
      valid.slice(i + 1);
  }
  return JSON.stringify(VALID[route]);
}

Deno.test("serve keeps answering random and mutated JSON bodies, with consistent counters", async () => {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`);
  const s = await startServer({ bundle, args: ["--drift-delta", "1e-12"] });
  const random = rng(20261121);
  const seen = new Map<string, number>();
  let decided = 0;
  let errors = 0;
  let played = 0;
  try {
    const connections = await Promise.all(
      Array.from({ length: 4 }, () => RawClient.open(s.port)),
    );
    try {
      for (let i = 0; i < 2000; i++) {
        const route = ROUTES[Math.floor(random() * ROUTES.length)]!;
        const body = randomBody(random, route);
        const c = connections[i % connections.length]!;
        await c.send(rawPost(route, body));
        const res = await c.response();
        const key = `${route} ${res.status}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
        assert.notEqual(
          res.headers.get("connection"),
          "close",
          `${route} ${body}`,
        );
        const json = JSON.parse(res.body);
        if (res.status === 200) {
          // A batch is a decision per item.
          if (route === "/v1/decide/batch") decided += json.items.length;
          else if (DECISION_ROUTES.has(route)) decided++;
          else played++;
        } else {
          assert.ok(
            [400, 404].includes(res.status),
            `${route} ${body} -> ${res.status} ${res.body}`,
          );
          assert.deepEqual(Object.keys(json), ["error"]);
          assert.equal(typeof json.error, "string");
          errors++;
        }
      }
    } finally {
      for (const c of connections) c.close();
    }
    const health = await getText(s.base, "/v1/health");
    assert.equal(health.status, 200);
    const stats = JSON.parse((await getText(s.base, "/v1/stats")).text);
    assert.equal(stats.counts.requests, decided);
    assert.equal(stats.counts.errors, errors);
    assert.equal(stats.counts.playground, played);
    assert.equal(stats.latency_us.count, decided);
    assert.equal(
      stats.counts.certified + stats.counts.deferred,
      stats.counts.answers,
    );
    const reasons = Object.values(
      stats.deferral_reasons as Record<string, number>,
    ).reduce((a, b) => a + b, 0);
    assert.equal(reasons, stats.counts.deferred);
    let perQuestion = 0;
    for (
      const q of Object.values(
        stats.per_question as Record<
          string,
          { answers: number; certified: number; flags: Record<string, number> }
        >,
      )
    ) {
      const flags = Object.values(q.flags).reduce((a, b) => a + b, 0);
      assert.equal(q.certified + flags, q.answers);
      perQuestion += q.answers;
    }
    assert.ok(perQuestion <= stats.counts.answers);
    const metrics = (await getText(s.base, "/metrics")).text;
    for (const [key, n] of seen) {
      const [route, code] = key.split(" ");
      const line = new RegExp(
        `^dtable_http_responses_total\\{route="${route}",code="${code}"\\} (\\d+)$`,
        "m",
      );
      assert.equal(Number(metrics.match(line)?.[1]), n, key);
    }
    assert.ok(
      decided > 50 && errors > 50,
      `a fair mix: ${decided} decided, ${errors} errors`,
    );
  } finally {
    const end = await s.stop();
    assert.doesNotMatch(end.stderr, /Internal error/, end.stderr);
  }
});

const METHODS = [
  "GET",
  "POST",
  "HEAD",
  "PUT",
  "DELETE",
  "PATCH",
  "OPTIONS",
  "post",
  "G@T",
];
const PATHS = [
  "/v1/decide",
  "/v1/decisions",
  "/v1/altdecisions",
  "/v1/playground",
  "/v1/health",
  "/v1/stats",
  "/metrics",
  "/",
  "/v1/decide/",
  "/v1/decide?x=1",
  "/nope",
  "//v1//decide",
  "/v1/%64ecide",
  "*",
  "v1/decide",
];

function pickOf<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

/** A random header field: mostly harmless, sometimes malformed. */
function randomField(random: () => number): string {
  const r = random();
  if (r < 0.55) {
    // A field value may not hold CR, LF or NUL (that case is below).
    // deno-lint-ignore no-control-regex
    const value = randomString(random).replace(/[\r\n\u0000]/g, "");
    return `X-${Math.floor(random() * 1000)}: ${value}`;
  }
  if (r < 0.62) return "Content-Type: text/plain";
  if (r < 0.67) return "Accept: */*";
  if (r < 0.72) return "Connection: close";
  if (r < 0.77) return "Expect: 100-continue";
  if (r < 0.8) return "Authorization: Bearer nothing";
  if (r < 0.83) return `X-Long: ${"v".repeat(Math.floor(random() * 3000))}`;
  // Malformed, one way or another.
  if (r < 0.86) {
    return `X-Bad: a${String.fromCharCode(Math.floor(random() * 32))}b`;
  }
  if (r < 0.89) return " folded: line";
  if (r < 0.92) return "No Colon Here";
  if (r < 0.96) {
    const bad = ["-1", "abc", "1, 2", "+3", "99999999999999999"];
    return `Content-Length: ${pickOf(random, bad)}`;
  }
  return "Transfer-Encoding: gzip";
}

/** A whole request: a random head around a body, framed by length or in chunks. */
function randomRequest(random: () => number): string {
  const method = random() < 0.7
    ? pickOf(random, ["GET", "POST"])
    : pickOf(random, METHODS);
  const path = pickOf(random, PATHS);
  const version = random() < 0.95
    ? "HTTP/1.1"
    : pickOf(random, ["HTTP/1.0", "HTTP/2.0", "HTP/1.1"]);
  const route = ROUTES.find((r) => path.startsWith(r)) ?? "/v1/decide";
  const body = method === "GET" || method === "HEAD"
    ? ""
    : randomBody(random, route);
  const fields = ["Host: 127.0.0.1"];
  for (let i = Math.floor(random() * 4); i > 0; i--) {
    fields.push(randomField(random));
  }
  const bytes = new TextEncoder().encode(body);
  if (random() < 0.2 && version === "HTTP/1.1") {
    // Chunked, in up to three pieces.
    fields.push("Transfer-Encoding: chunked");
    // Cut between characters, so that each chunk's size is its own bytes
    // (a malformed chunk is a framing error Deno.serve answers by closing).
    const chars = [...body];
    const cut = Math.floor(random() * (chars.length + 1));
    const parts = [chars.slice(0, cut).join(""), chars.slice(cut).join("")]
      .filter((p) => p.length > 0);
    const chunks = parts.map((p) =>
      `${new TextEncoder().encode(p).length.toString(16)}\r\n${p}\r\n`
    ).join("");
    return `${method} ${path} ${version}\r\n${
      fields.join("\r\n")
    }\r\n\r\n${chunks}0\r\n\r\n`;
  }
  if (body !== "" || random() < 0.5) {
    fields.push(`Content-Length: ${bytes.length}`);
  }
  return `${method} ${path} ${version}\r\n${
    fields.join("\r\n")
  }\r\n\r\n${body}`;
}

/** True when `request` declares a `Content-Length` larger than the body it carries. */
function declaresMoreThanSent(request: string): boolean {
  const end = request.indexOf("\r\n\r\n");
  const m = request.slice(0, end).match(/\r\ncontent-length: *(\d+)\r?$/im);
  if (m === null) return false;
  const sent = new TextEncoder().encode(request.slice(end + 4)).length;
  return Number(m[1]) > sent;
}

Deno.test("serve answers random and mutated request heads on every route, never with a 5xx, closing only when it says so", async () => {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`);
  const s = await startServer({ bundle, args: ["--drift-delta", "1e-12"] });
  const random = rng(20261123);
  const byStatus = new Map<number, number>();
  let responses = 0;
  let byDeno = 0;
  let reconnects = 0;
  try {
    let c = await RawClient.open(s.port);
    try {
      for (let i = 0; i < 1500; i++) {
        const request = randomRequest(random);
        await c.send(request);
        const isHead = request.startsWith("HEAD ");
        const res = await c.response(10_000, isHead).catch(
          (e) => {
            throw new Error(
              `${(e as Error).message} for ${
                JSON.stringify(request.slice(0, 400))
              }`,
            );
          },
        );
        responses++;
        // Deno.serve answers a head it cannot parse itself (400, no body,
        // no content type): the app never sees it, so it is not counted.
        if (res.status === 400 && !res.headers.has("content-type")) {
          byDeno++;
        } else byStatus.set(res.status, (byStatus.get(res.status) ?? 0) + 1);
        assert.ok(
          res.status < 500,
          `${res.status} for ${JSON.stringify(request.slice(0, 300))}`,
        );
        if (
          !isHead && res.headers.get("content-type")?.includes("json") &&
          res.status >= 400
        ) {
          assert.deepEqual(Object.keys(JSON.parse(res.body)), ["error"]);
        }
        const head = request.slice(0, request.indexOf("\r\n"));
        if (
          res.headers.get("connection") === "close" || head.endsWith("HTTP/1.0")
        ) {
          // Deno.serve waits for a declared body before it closes: a request
          // declaring more bytes than it sent is left by the client.
          if (!declaresMoreThanSent(request)) {
            assert.ok(
              await c.closedByServer(),
              `a reply saying close is followed by the close: ${res.status} for ${
                JSON.stringify(request.slice(0, 300))
              }`,
            );
          }
          c.close();
          c = await RawClient.open(s.port);
          reconnects++;
        }
      }
    } finally {
      c.close();
    }
    const stats = JSON.parse((await getText(s.base, "/v1/stats")).text);
    const errors = [...byStatus].filter(([code]) => code >= 400).reduce(
      (n, [, k]) => n + k,
      0,
    );
    assert.equal(stats.counts.errors, errors);
    const metrics = (await getText(s.base, "/metrics")).text;
    // Every response the client saw is counted once, under its status.
    const counted = new Map<number, number>();
    for (
      const m of metrics.matchAll(
        /^dtable_http_responses_total\{route="[^"]*",code="(\d+)"\} (\d+)$/gm,
      )
    ) {
      counted.set(
        Number(m[1]),
        (counted.get(Number(m[1])) ?? 0) + Number(m[2]),
      );
    }
    counted.set(200, counted.get(200)! - 1); // the /v1/stats request above
    assert.deepEqual(
      new Map([...counted].sort()),
      new Map([...byStatus].sort()),
    );
    assert.ok(
      byStatus.size >= 4 && reconnects > 10,
      `a fair mix: ${JSON.stringify([...byStatus])}, ${reconnects} reconnects`,
    );
    assert.equal(responses, 1500);
    assert.ok(byDeno > 0 && byDeno < 750, `${byDeno} answered by Deno.serve`);
  } finally {
    const end = await s.stop();
    assert.doesNotMatch(
      end.stderr,
      /Internal error|Connection error/,
      end.stderr,
    );
  }
});
