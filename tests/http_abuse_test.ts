/**
 * The real server (`main.ts serve` in a child process, on `Deno.serve`)
 * against abusive clients, over real sockets: trickled heads and bodies,
 * held and idle connections, too many requests in flight, oversized heads
 * and chunked bodies, huge and deeply nested JSON, and SIGTERM with
 * requests in flight. The limits are set small by flags so that each case
 * ends quickly; no assertion is a timing: a limit that did not work shows
 * as a read that never ends (the client gives up after 10 s) or as events
 * in the wrong order.
 *
 * `Deno.serve` has no header or idle timeout and no connection cap; the
 * tests of those assert what the service promises whatever the transport
 * does with such connections: other clients are still served.
 */

import assert from "node:assert/strict";
import { rng, tempDir } from "./_fixtures.ts";
import {
  getText,
  postJson,
  RawClient,
  rawPost,
  type RunningServer,
  startServer,
  writeTestBundle,
} from "./_http_helpers.ts";

const CLEAR = "my invoice was overcharged";

async function withServer(
  args: string[],
  body: (s: RunningServer) => Promise<void>,
): Promise<void> {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`);
  const server = await startServer({ bundle, args });
  try {
    await body(server);
  } finally {
    const end = await server.stop();
    assert.doesNotMatch(end.stderr, /Internal error|Connection error/);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sends `text` one byte every `everyMs` until `stop()` says so or the socket fails. */
function trickle(
  c: RawClient,
  text: string,
  everyMs: number,
): { stop: () => void; done: Promise<void> } {
  let stopped = false;
  const done = (async () => {
    for (const ch of text) {
      if (stopped) return;
      try {
        await c.send(ch);
      } catch {
        return;
      }
      await sleep(everyMs);
    }
  })();
  return { stop: () => (stopped = true), done };
}

/** Ten decide requests on a fresh connection, each answered 200. */
async function tenDecisions(port: number): Promise<void> {
  const c = await RawClient.open(port);
  try {
    for (let i = 0; i < 10; i++) {
      await c.send(rawPost("/v1/decide", JSON.stringify({ state: CLEAR })));
      assert.equal((await c.response()).status, 200);
    }
  } finally {
    c.close();
  }
}

Deno.test("serve keeps serving others while 50 connections trickle heads, sit idle or never speak", async () => {
  await withServer([], async (s) => {
    const held: RawClient[] = [];
    const trickles: { stop: () => void; done: Promise<void> }[] = [];
    try {
      for (let i = 0; i < 50; i++) {
        const c = await RawClient.open(s.port);
        held.push(c);
        if (i % 3 === 0) {
          trickles.push(trickle(
            c,
            "POST /v1/decide HTTP/1.1\r\nHost: x\r\nX-Slow: " +
              "a".repeat(200),
            50,
          ));
        } else if (i % 3 === 1) {
          await c.send(rawPost("/v1/decide", JSON.stringify({ state: CLEAR })));
          assert.equal((await c.response()).status, 200);
        }
      }
      // Others are served while the 50 are held, and again a second later.
      await tenDecisions(s.port);
      await sleep(1000);
      await tenDecisions(s.port);
      for (const t of trickles) t.stop();
      await Promise.all(trickles.map((t) => t.done));
      // A kept-alive connection still answers after its idle second.
      const kept = held[1]!;
      await kept.send(rawPost("/v1/decide", JSON.stringify({ state: CLEAR })));
      assert.equal((await kept.response()).status, 200);
    } finally {
      for (const t of trickles) t.stop();
      for (const c of held) c.close();
    }
    const stats = JSON.parse((await getText(s.base, "/v1/stats")).text);
    assert.equal(stats.counts.requests, 17 + 20 + 1);
  });
});

Deno.test("serve answers 408 to a client trickling its body, and keeps serving others meanwhile", async () => {
  await withServer(["--body-timeout-ms", "1500"], async (s) => {
    const slow = await RawClient.open(s.port);
    try {
      await slow.send(
        "POST /v1/decide HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n",
      );
      const t = trickle(slow, "x".repeat(500), 50);
      const events: string[] = [];
      const refused = slow.response().then((res) => {
        events.push("slow client answered");
        return res;
      });
      await tenDecisions(s.port);
      events.push("other client served");
      const res = await refused;
      t.stop();
      await t.done;
      assert.deepEqual(events, ["other client served", "slow client answered"]);
      assert.equal(res.status, 408);
      assert.equal(res.headers.get("connection"), "close");
      // Deno.serve says so itself for a body left unread: once, not twice.
      assert.deepEqual(
        res.headerLines.filter((l) => /^connection:/i.test(l)),
        ["connection: close"],
      );
      assert.match(
        JSON.parse(res.body).error,
        /body did not arrive within 1500 ms/,
      );
      // Deno.serve closes the connection once the declared body is in.
      await slow.send("x".repeat(500)).catch(() => {});
      assert.ok(await slow.closedByServer());
      await t.done;
    } finally {
      slow.close();
    }
  });
});

Deno.test("serve refuses requests beyond --max-in-flight with 503, and takes new ones once some are answered", async () => {
  await withServer(["--max-in-flight", "3"], async (s) => {
    const held: RawClient[] = [];
    const body = JSON.stringify({ state: CLEAR });
    try {
      // Three requests whose bodies are still arriving hold the three places.
      for (let i = 0; i < 3; i++) {
        const c = await RawClient.open(s.port);
        await c.send(
          `POST /v1/decide HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${
            body.slice(0, 3)
          }`,
        );
        held.push(c);
      }
      let refused = null;
      for (let i = 0; i < 200 && refused?.status !== 503; i++) {
        if (i > 0) await sleep(20);
        refused = await getText(s.base, "/v1/health");
      }
      assert.equal(refused!.status, 503);
      assert.match(JSON.parse(refused!.text).error, /at most 3 at once/);
      const extra = await RawClient.open(s.port);
      try {
        await extra.send(rawPost("/v1/decide", body));
        const res = await extra.response();
        assert.equal(res.status, 503);
        assert.equal(res.headers.get("retry-after"), "1");
        // A refusal keeps the connection: the same client gets in later.
        await held[0]!.send(body.slice(3));
        assert.equal((await held[0]!.response()).status, 200);
        await extra.send(rawPost("/v1/decide", body));
        assert.equal((await extra.response()).status, 200);
      } finally {
        extra.close();
      }
    } finally {
      for (const c of held) c.close();
    }
    let metrics = await getText(s.base, "/metrics");
    for (let i = 0; i < 300 && metrics.status === 503; i++) {
      await sleep(50);
      metrics = await getText(s.base, "/metrics");
    }
    assert.match(
      metrics.text,
      /^dtable_http_responses_total\{route="\/v1\/decide",code="503"\} 1$/m,
    );
    assert.match(
      metrics.text,
      /^dtable_http_responses_total\{route="\/v1\/health",code="503"\} [1-9]/m,
    );
  });
});

Deno.test("serve (Deno.serve) answers a request head over 64 KiB or with more than 128 fields with 400 and closes", async (t) => {
  await withServer([], async (s) => {
    const cases: [string, string, number][] = [
      [
        "a 63 KiB field",
        `GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${
          "a".repeat(63 * 1024)
        }\r\n\r\n`,
        200,
      ],
      [
        "a 64 KiB field",
        `GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${
          "a".repeat(64 * 1024)
        }\r\n\r\n`,
        400,
      ],
      [
        "a head that never ends",
        `GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(200_000)}`,
        400,
      ],
      [
        "128 fields",
        "GET /v1/health HTTP/1.1\r\n" +
        Array.from({ length: 127 }, (_, i) => `X-${i}: 1\r\n`).join("") +
        "Host: x\r\n\r\n",
        200,
      ],
      [
        "129 fields",
        "GET /v1/health HTTP/1.1\r\n" +
        Array.from({ length: 128 }, (_, i) => `X-${i}: 1\r\n`).join("") +
        "Host: x\r\n\r\n",
        400,
      ],
    ];
    for (const [name, request, status] of cases) {
      await t.step(name, async () => {
        const c = await RawClient.open(s.port);
        try {
          await c.send(request).catch(() => {});
          const res = await c.response();
          assert.equal(res.status, status);
          if (status === 400) {
            assert.equal(res.headers.get("connection"), "close");
            assert.ok(await c.closedByServer());
          }
        } finally {
          c.close();
        }
      });
    }
    assert.equal((await getText(s.base, "/v1/health")).status, 200);
  });
});

Deno.test("serve refuses a chunked body over 1 MiB with 413 once it passes the limit, before its end", async () => {
  await withServer([], async (s) => {
    const c = await RawClient.open(s.port);
    try {
      // 1.25 MiB in 64 KiB chunks, and no last chunk: the answer cannot
      // wait for the whole body.
      await c.send(
        "POST /v1/decide HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
      );
      const chunk = `10000\r\n${"a".repeat(0x10000)}\r\n`;
      for (let i = 0; i < 20; i++) await c.send(chunk).catch(() => {});
      const res = await c.response();
      assert.equal(res.status, 413);
      assert.match(JSON.parse(res.body).error, /larger than 1048576 bytes/);
    } finally {
      c.close();
    }
    // A chunked body within the limit is read and answered.
    const ok = await RawClient.open(s.port);
    try {
      const body = JSON.stringify({ state: CLEAR });
      const half = body.length >> 1;
      await ok.send(
        "POST /v1/decide HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
          `${half.toString(16)}\r\n${body.slice(0, half)}\r\n` +
          `${(body.length - half).toString(16)};ext=1\r\n${
            body.slice(half)
          }\r\n0\r\nX-Trailer: 1\r\n\r\n`,
      );
      const res = await ok.response();
      assert.equal(res.status, 200);
      assert.equal(JSON.parse(res.body).answers.topic.choice, "billing");
    } finally {
      ok.close();
    }
  });
});

function randomWords(random: () => number, bytes: number): string {
  const letters = "abcdefghijklmnopqrstuvwxyz";
  let s = "";
  while (s.length < bytes) {
    const n = 3 + Math.floor(random() * 8);
    for (let i = 0; i < n; i++) s += letters[Math.floor(random() * 26)];
    s += " ";
  }
  return s;
}

Deno.test("serve answers huge and deeply nested JSON with 400 or a bounded answer", async (t) => {
  await withServer([], async (s) => {
    const random = rng(7);
    const deep = (open: string, close: string, n: number) =>
      open.repeat(n) + close.repeat(n);
    const cases: [string, string, number][] = [
      [
        "a state nested 100k arrays deep",
        `{"state": ${deep("[", "]", 100_000)}}`,
        400,
      ],
      [
        "a state nested 100k objects deep",
        `{"state": ${deep('{"a":', "}", 100_000).replace("}", "1}")}}`,
        200,
      ],
      [
        "criteria nested 100k arrays deep",
        `{"state": "x", "questions": {"topic": {"criteria": ${
          deep("[", "]", 100_000)
        }}}}`,
        400,
      ],
      [
        "a million keys",
        `{"state": "x", "questions": {${
          Array.from({ length: 1_000_000 }, (_, i) => `"${i}":{}`).join(",")
        }}}`,
        413,
      ],
      [
        "100k criteria",
        JSON.stringify({
          state: CLEAR,
          questions: {
            topic: {
              criteria: Array.from({ length: 100_000 }, (_, i) => `o${i}`),
            },
          },
        }),
        400,
      ],
      [
        "5,000 question names",
        JSON.stringify({
          state: CLEAR,
          questions: Object.fromEntries(
            Array.from({ length: 5000 }, (_, i) => [`q${i}`, {}]),
          ),
        }),
        400,
      ],
      [
        "1,000 question names",
        JSON.stringify({
          state: CLEAR,
          questions: Object.fromEntries(
            Array.from({ length: 1000 }, (_, i) => [`q${i}`, {}]),
          ),
        }),
        200,
      ],
      [
        "10,000 criteria never learned",
        JSON.stringify({
          state: CLEAR,
          questions: {
            topic: {
              criteria: Array.from({ length: 10_000 }, (_, i) => `o${i}`),
            },
          },
        }),
        200,
      ],
      [
        "a 1 MB state of never-seen words",
        JSON.stringify({ state: randomWords(random, 1_000_000) }),
        200,
      ],
    ];
    for (const [name, body, status] of cases) {
      await t.step(name, async () => {
        const c = await RawClient.open(s.port);
        try {
          // A body the server refuses unread is not sent: only its head.
          const request = rawPost("/v1/decide", body);
          await c.send(
            status === 413
              ? request.slice(0, request.indexOf("\r\n\r\n") + 4)
              : request,
          );
          const res = await c.response(30_000);
          assert.equal(res.status, status, res.body.slice(0, 300));
          const json = JSON.parse(res.body);
          if (status === 200) {
            // Bounded: no bigger than the request plus a few kB per answer.
            assert.ok(res.body.length < body.length + 1_000_000);
            assert.ok(Object.keys(json.answers).length <= 1000);
          } else assert.deepEqual(Object.keys(json), ["error"]);
        } finally {
          c.close();
        }
      });
    }
    const after = await postJson(s.base, "/v1/decide", { state: CLEAR });
    assert.equal(after.status, 200, "the server keeps answering");
  });
});

Deno.test("serve drains requests in flight on SIGTERM, refuses new ones, closes idle connections, and exits 0", async () => {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`);
  const s = await startServer({ bundle, args: ["--drain-ms", "5000"] });
  const idle = await RawClient.open(s.port);
  const busy = await RawClient.open(s.port);
  try {
    await idle.send(rawPost("/v1/decide", JSON.stringify({ state: CLEAR })));
    assert.equal((await idle.response()).status, 200);
    const body = JSON.stringify({ state: CLEAR });
    await busy.send(
      `POST /v1/decide HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${
        body.slice(0, 5)
      }`,
    );
    await sleep(200);
    const exit = s.stop("SIGTERM");
    await sleep(200);
    // A new request meanwhile is refused and told the connection closes
    // (Deno.serve closes it with the others once the drain is over).
    const late = await RawClient.open(s.port);
    try {
      await late.send(rawPost("/v1/decide", JSON.stringify({ state: CLEAR })));
      const refused = await late.response();
      assert.equal(refused.status, 503);
      assert.equal(refused.headers.get("connection"), "close");
      assert.match(JSON.parse(refused.body).error, /shutting down/);
    } finally {
      late.close();
    }
    // The request in flight is answered; then every connection is closed.
    await busy.send(body.slice(5));
    const res = await busy.response();
    assert.equal(res.status, 200);
    assert.ok(await busy.closedByServer(10_000));
    assert.ok(await idle.closedByServer(10_000));
    const end = await exit;
    assert.equal(end.code, 0);
    assert.equal(end.stderr, "");
    await assert.rejects(
      Deno.connect({ hostname: "127.0.0.1", port: s.port }),
      "no new connection once draining",
    );
  } finally {
    idle.close();
    busy.close();
  }
});

Deno.test("serve exits 0 after --drain-ms with a warning when a request in flight never finishes", async () => {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`);
  const s = await startServer({ bundle, args: ["--drain-ms", "300"] });
  const stuck = await RawClient.open(s.port);
  try {
    await stuck.send(
      "POST /v1/decide HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{",
    );
    await sleep(200);
    const end = await s.stop("SIGTERM");
    assert.equal(end.code, 0);
    assert.match(
      end.stderr,
      /^warning: requests still in flight after --drain-ms 300; stopping anyway\n$/,
    );
  } finally {
    stuck.close();
  }
});
