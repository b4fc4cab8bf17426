/**
 * The real server (`main.ts serve` in a child process) against abusive
 * clients, over real sockets: trickled heads and bodies, idle connections,
 * too many connections, oversized heads and chunked bodies, huge and deeply
 * nested JSON, and SIGTERM with requests in flight. The limits are set
 * small by flags so that each case ends quickly; no assertion is a timing:
 * a limit that did not work shows as a read that never ends (the client
 * gives up after 10 s) or as events in the wrong order.
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

Deno.test("serve answers 408 to a client trickling its request head, and keeps serving others meanwhile", async () => {
  await withServer(["--header-timeout-ms", "1500"], async (s) => {
    const slow = await RawClient.open(s.port);
    try {
      const events: string[] = [];
      const t = trickle(
        slow,
        "POST /v1/decide HTTP/1.1\r\nHost: x\r\nX-Slow: " + "a".repeat(200),
        50,
      );
      const refused = slow.response().then((res) => {
        events.push("slow client answered");
        return res;
      });
      await tenDecisions(s.port);
      events.push("other client served");
      const res = await refused;
      t.stop();
      assert.deepEqual(events, ["other client served", "slow client answered"]);
      assert.equal(res.status, 408);
      assert.equal(res.headers.get("connection"), "close");
      assert.match(
        JSON.parse(res.body).error,
        /head did not arrive within 1500 ms/,
      );
      assert.ok(await slow.closedByServer());
      await t.done;
    } finally {
      slow.close();
    }
    const stats = JSON.parse((await getText(s.base, "/v1/stats")).text);
    assert.equal(stats.counts.requests, 10);
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
      assert.deepEqual(events, ["other client served", "slow client answered"]);
      assert.equal(res.status, 408);
      assert.match(
        JSON.parse(res.body).error,
        /body did not arrive within 1500 ms/,
      );
      assert.ok(await slow.closedByServer());
      await t.done;
    } finally {
      slow.close();
    }
  });
});

Deno.test("serve closes a keep-alive connection idle for --idle-timeout-ms, and one that never speaks", async () => {
  await withServer(["--idle-timeout-ms", "500"], async (s) => {
    const used = await RawClient.open(s.port);
    const silent = await RawClient.open(s.port);
    try {
      await used.send(rawPost("/v1/decide", JSON.stringify({ state: CLEAR })));
      assert.equal((await used.response()).status, 200);
      assert.ok(await used.closedByServer(10_000), "idle after a request");
      assert.ok(await silent.closedByServer(10_000), "never sent a byte");
    } finally {
      used.close();
      silent.close();
    }
  });
});

Deno.test("serve refuses connections beyond --max-connections with 503, and takes new ones once some close", async () => {
  await withServer(["--max-connections", "3"], async (s) => {
    const held: RawClient[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const c = await RawClient.open(s.port);
        await c.send("GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n");
        assert.equal((await c.response()).status, 200);
        held.push(c);
      }
      const extra = await RawClient.open(s.port);
      try {
        const res = await extra.response();
        assert.equal(res.status, 503);
        assert.equal(res.headers.get("connection"), "close");
        assert.equal(res.headers.get("retry-after"), "1");
        assert.match(JSON.parse(res.body).error, /at most 3 at once/);
        assert.ok(await extra.closedByServer());
      } finally {
        extra.close();
      }
      held.pop()!.close();
      // The server notices the close on its next read; a new client then gets in.
      let status = 0;
      const deadline = Date.now() + 15_000;
      while (status !== 200 && Date.now() < deadline) {
        const c = await RawClient.open(s.port);
        try {
          await c.send("GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n");
          status = (await c.response()).status;
        } catch {
          status = 0;
        } finally {
          c.close();
        }
        if (status !== 200) await sleep(50);
      }
      assert.equal(status, 200);
    } finally {
      for (const c of held) c.close();
    }
    // Every connection is closed now; once the server has noticed, /metrics answers.
    let metrics = await getText(s.base, "/metrics");
    for (let i = 0; i < 300 && metrics.status === 503; i++) {
      await sleep(50);
      metrics = await getText(s.base, "/metrics");
    }
    assert.match(
      metrics.text,
      /^dtable_http_responses_total\{route="other",code="503"\} [1-9]/m,
    );
  });
});

Deno.test("serve refuses a request head over --max-header-bytes or with more than 100 fields with 431", async (t) => {
  await withServer(["--max-header-bytes", "4096"], async (s) => {
    const cases: [string, string][] = [
      [
        "a long field",
        `GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${
          "a".repeat(5000)
        }\r\n\r\n`,
      ],
      [
        "a head that never ends",
        `GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20000)}`,
      ],
      [
        "101 fields",
        "GET /v1/health HTTP/1.1\r\n" +
        Array.from({ length: 101 }, (_, i) => `X-${i}: 1\r\n`).join("") +
        "\r\n",
      ],
    ];
    for (const [name, request] of cases) {
      await t.step(name, async () => {
        const c = await RawClient.open(s.port);
        try {
          await c.send(request).catch(() => {});
          const res = await c.response();
          assert.equal(res.status, 431);
          assert.equal(res.headers.get("connection"), "close");
          assert.deepEqual(Object.keys(JSON.parse(res.body)), ["error"]);
        } finally {
          c.close();
        }
      });
    }
    assert.equal((await getText(s.base, "/v1/health")).status, 200);
  });
});

Deno.test("serve refuses a chunked body over 1 MiB with 413 as soon as its chunk sizes pass the limit", async () => {
  await withServer([], async (s) => {
    const c = await RawClient.open(s.port);
    try {
      // One chunk announced at 2 MiB: refused before any more is sent.
      await c.send(
        "POST /v1/decide HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
          "200000\r\n" + "a".repeat(100),
      );
      const res = await c.response();
      assert.equal(res.status, 413);
      assert.match(JSON.parse(res.body).error, /larger than 1048576 bytes/);
      assert.ok(await c.closedByServer());
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

Deno.test("serve drains requests in flight on SIGTERM, closes idle connections, and exits 0", async () => {
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
    // The idle connection is closed; the one in flight is still answered.
    assert.ok(await idle.closedByServer(10_000));
    await busy.send(body.slice(5));
    const res = await busy.response();
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("connection"), "close");
    assert.ok(await busy.closedByServer());
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
