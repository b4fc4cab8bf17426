/**
 * The real server (`main.ts serve` in a child process) over real sockets:
 * every route, keep-alive across errors, the 1 MiB limit and malformed
 * Content-Length on the wire, concurrent clients, the token in all its forms
 * and from a file, startup failures, quiet stops, and the locked-down
 * permission set.
 */

import assert from "node:assert/strict";
import { tempDir } from "./_fixtures.ts";
import { missingTool, promtoolCheck } from "./_tools.ts";
import { INTERFACE_VERSION, TOOL_VERSION } from "../src/version.ts";
import {
  freePort,
  getText,
  postJson,
  RawClient,
  rawPost,
  type RunningServer,
  runServe,
  startServer,
  writeTestBundle,
} from "./_http_helpers.ts";

type Json = Record<string, unknown>;

async function withServer(
  options: Omit<Parameters<typeof startServer>[0], "bundle"> & {
    settings?: Parameters<typeof writeTestBundle>[1];
  },
  body: (s: RunningServer, bundle: string) => Promise<void> | void,
): Promise<void> {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`, options.settings);
  const server = await startServer({ ...options, bundle });
  try {
    await body(server, bundle);
  } finally {
    await server.stop();
  }
}

const CLEAR = "my invoice was overcharged";

Deno.test("serve answers every route over a real socket", async () => {
  await withServer({}, async (s, bundle) => {
    const decide = await postJson(s.base, "/v1/decide", { state: CLEAR });
    assert.equal(decide.status, 200);
    assert.equal(
      ((decide.json.answers as Json).topic as Json).choice,
      "billing",
    );
    const decisions = await postJson(s.base, "/v1/decisions", {
      model: "m",
      input: CLEAR,
      questions: [{
        type: "choice",
        name: "topic",
        instructions: "",
        choices: [],
      }],
    });
    assert.equal(decisions.status, 200);
    assert.equal(decisions.json.object, "decision");
    const alt = await postJson(s.base, "/v1/altdecisions", {
      model: "m",
      state: CLEAR,
      questions: { urgent: { type: "predicate", instructions: "" } },
    });
    assert.equal(alt.status, 200);
    assert.equal(typeof alt.json.latency_ms, "number");
    const play = await postJson(s.base, "/v1/playground", {
      question: "topic",
      text: CLEAR,
    });
    assert.equal(play.status, 200);
    assert.equal(play.json.answer, "billing");
    const stats = await getText(s.base, "/v1/stats");
    assert.equal(stats.status, 200);
    assert.equal(JSON.parse(stats.text).counts.requests, 3);
    const metrics = await getText(s.base, "/metrics");
    assert.equal(metrics.status, 200);
    assert.match(metrics.text, /dtable_decision_requests_total/);
    const health = await getText(s.base, "/v1/health");
    const { bundle_id, ...rest } = JSON.parse(health.text);
    assert.deepEqual(rest, {
      ok: true,
      questions: ["topic", "urgent", "coin"],
      version: TOOL_VERSION,
      interface_version: INTERFACE_VERSION,
    });
    // A bundle read from its folder is named by its manifest's checksum.
    const manifest = JSON.parse(
      await Deno.readTextFile(`${bundle}/manifest.json`),
    );
    assert.equal(bundle_id, manifest.manifest_sha256);
    const page = await getText(s.base, "/");
    assert.equal(page.status, 200);
    assert.match(page.headers.get("content-type")!, /^text\/html/);
  });
});

Deno.test("serve prints a banner naming the bundle, its questions, the address and the token state", async () => {
  await withServer({}, (s, bundle) => {
    const { stdout, stderr } = s.output();
    assert.match(
      stdout,
      new RegExp(
        `serving bundle ${bundle.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`,
      ),
    );
    assert.match(stdout, /question topic: choice of 4 options/);
    assert.match(stdout, /question urgent: yes\/no/);
    assert.match(stdout, /question coin: yes\/no, uncalibrated/);
    assert.match(
      stdout,
      new RegExp(`listening on http://127\\.0\\.0\\.1:${s.port}/`),
    );
    assert.match(stdout, /access token: not set/);
    assert.equal(stderr, "");
  });
});

Deno.test("serve keeps one keep-alive connection open across 400, 404 and 405 answers", async () => {
  await withServer({}, async (s) => {
    const c = await RawClient.open(s.port);
    try {
      const exchange: [string, number][] = [
        [rawPost("/v1/decide", "{not json"), 400],
        [rawPost("/v1/decide", "[]"), 400],
        [rawPost("/v1/decide", '{"questions": {}}'), 400],
        [rawPost("/v1/decisions", '{"input": 1}'), 400],
        [rawPost("/v1/nowhere", "{}"), 404],
        ["GET /v1/decide HTTP/1.1\r\nHost: x\r\n\r\n", 405],
        ["DELETE /v1/stats HTTP/1.1\r\nHost: x\r\n\r\n", 405],
        [rawPost("/v1/playground", '{"question": "nope", "text": "x"}'), 200],
        [rawPost("/v1/decide", JSON.stringify({ state: CLEAR })), 200],
        ["GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n", 200],
      ];
      for (const [request, status] of exchange) {
        await c.send(request);
        const res = await c.response();
        assert.equal(res.status, status, request.split("\r\n")[0]);
        assert.notEqual(res.headers.get("connection"), "close");
        assert.match(res.headers.get("content-type")!, /application\/json/);
        const body = JSON.parse(res.body);
        if (status >= 400) assert.deepEqual(Object.keys(body), ["error"]);
      }
      // Pipelined: three requests written at once, three answers in order.
      await c.send(
        rawPost("/v1/decide", "{") + rawPost("/v1/decide", '{"state": "hi"}') +
          rawPost("/x", "{}"),
      );
      assert.deepEqual([
        (await c.response()).status,
        (await c.response()).status,
        (await c.response()).status,
      ], [
        400,
        200,
        404,
      ]);
    } finally {
      c.close();
    }
  });
});

Deno.test("serve refuses a negative or non-numeric Content-Length with 400", async (t) => {
  await withServer({}, async (s) => {
    for (const value of ["-5", "abc", "1e3", "+5", "5, 6"]) {
      await t.step(`Content-Length: ${value}`, async () => {
        const c = await RawClient.open(s.port);
        try {
          await c.send(
            `POST /v1/decide HTTP/1.1\r\nHost: x\r\nContent-Length: ${value}\r\n\r\n{"state": "x"}`,
          );
          const res = await c.response();
          assert.equal(res.status, 400);
          // The framing of the connection is lost: the server says so and closes it.
          assert.equal(res.headers.get("connection"), "close");
          assert.ok(await c.closedByServer());
        } finally {
          c.close();
        }
      });
    }
    const after = await postJson(s.base, "/v1/decide", { state: CLEAR });
    assert.equal(after.status, 200, "the server keeps answering");
  });
});

Deno.test("serve refuses a body over 1 MiB with 413 without waiting for it", async (t) => {
  await withServer({}, async (s) => {
    await t.step(
      "a declared length: the answer comes before any body byte is sent",
      async () => {
        const c = await RawClient.open(s.port);
        try {
          await c.send(
            "POST /v1/decide HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\n\r\n",
          );
          const res = await c.response();
          assert.equal(res.status, 413);
          assert.match(JSON.parse(res.body).error, /larger than 1048576 bytes/);
        } finally {
          c.close();
        }
      },
    );
    await t.step("with Expect: 100-continue", async () => {
      const c = await RawClient.open(s.port);
      try {
        await c.send(
          "POST /v1/decide HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\nExpect: 100-continue\r\n\r\n",
        );
        assert.equal((await c.response()).status, 413);
      } finally {
        c.close();
      }
    });
    await t.step("a chunked body that grows past the limit", async () => {
      const c = await RawClient.open(s.port);
      try {
        await c.send(
          "POST /v1/decide HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
        );
        const chunk = `10000\r\n${" ".repeat(0x10000)}\r\n`;
        for (let i = 0; i < 17; i++) await c.send(chunk);
        assert.equal((await c.response()).status, 413);
      } finally {
        c.close();
      }
    });
    await t.step("a real 2 MiB body sent by fetch", async () => {
      const res = await fetch(`${s.base}/v1/decide`, {
        method: "POST",
        body: " ".repeat(2 * 1048576),
      });
      assert.equal(res.status, 413);
      assert.deepEqual(Object.keys(await res.json()), ["error"]);
    });
    const after = await postJson(s.base, "/v1/decide", { state: CLEAR });
    assert.equal(after.status, 200);
  });
});

Deno.test("serve answers many concurrent keep-alive clients and counts every request", async () => {
  await withServer({ args: ["--drift-delta", "1e-12"] }, async (s) => {
    const clients = 16;
    const each = 25;
    const texts = [
      "my invoice was overcharged",
      "where is my parcel",
      "refund my money please",
      "i am locked out of my login",
    ];
    const results = await Promise.all(
      Array.from({ length: clients }, async (_, k) => {
        const c = await RawClient.open(s.port);
        try {
          const statuses: number[] = [];
          for (let i = 0; i < each; i++) {
            await c.send(
              rawPost(
                "/v1/decide",
                JSON.stringify({ state: texts[(k + i) % texts.length] }),
              ),
            );
            const res = await c.response();
            statuses.push(res.status);
            JSON.parse(res.body);
          }
          return statuses;
        } finally {
          c.close();
        }
      }),
    );
    assert.ok(results.flat().every((x) => x === 200));
    const stats = JSON.parse((await getText(s.base, "/v1/stats")).text);
    assert.equal(stats.counts.requests, clients * each);
    assert.equal(stats.counts.answers, clients * each * 3);
    assert.equal(stats.counts.errors, 0);
    assert.equal(stats.latency_us.count, clients * each);
  });
});

const TOKEN = "wire-token-42";
const basic = (user: string, password: string) =>
  "Basic " + btoa(`${user}:${password}`);

const BODIES: Record<string, unknown> = {
  "/v1/decide": { state: CLEAR },
  "/v1/decisions": {
    input: CLEAR,
    questions: [{ type: "choice", name: "topic" }],
  },
  "/v1/altdecisions": { state: CLEAR, questions: { urgent: { type: "noul" } } },
  "/v1/playground": { question: "topic", text: CLEAR },
};

async function statusOf(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
): Promise<Response> {
  return await fetch(`${base}${path}`, {
    method,
    headers,
    ...(method === "POST" ? { body: JSON.stringify(BODIES[path]) } : {}),
  });
}

Deno.test("serve guards every route but health with the token from the environment", async (t) => {
  await withServer({ env: { SERVICE_PROXY_TOKEN: TOKEN } }, async (s) => {
    assert.match(
      s.output().stdout,
      /access token: set, from environment variable SERVICE_PROXY_TOKEN/,
    );
    const routes: [string, string][] = [
      ["POST", "/v1/decide"],
      ["POST", "/v1/decisions"],
      ["POST", "/v1/altdecisions"],
      ["POST", "/v1/playground"],
      ["GET", "/"],
      ["GET", "/v1/stats"],
      ["GET", "/metrics"],
    ];
    const credentials: [string, Record<string, string>, number][] = [
      ["none", {}, 401],
      ["wrong header", { "X-Service-Token": "wrong" }, 401],
      ["header", { "X-Service-Token": TOKEN }, 0],
      ["bearer", { Authorization: `Bearer ${TOKEN}` }, 0],
      ["wrong bearer", { Authorization: `Bearer ${TOKEN}x` }, 401],
      ["basic password", { Authorization: basic("admin", TOKEN) }, 0],
      ["basic wrong password", { Authorization: basic(TOKEN, "admin") }, 401],
    ];
    for (const [name, headers, expected] of credentials) {
      await t.step(name, async () => {
        for (const [method, path] of routes) {
          const res = await statusOf(s.base, method, path, headers);
          const text = await res.text();
          if (expected === 401) {
            assert.equal(res.status, 401, `${method} ${path}`);
            assert.deepEqual(Object.keys(JSON.parse(text)), ["error"]);
            const challenge = res.headers.get("www-authenticate") ?? "";
            assert.match(
              challenge,
              method === "GET" ? /^Basic realm=/ : /^Bearer realm=/,
              `${method} ${path}`,
            );
          } else {
            assert.ok(
              res.status === 200,
              `${method} ${path}: ${res.status} ${text}`,
            );
          }
        }
      });
    }
    await t.step("health needs no token", async () => {
      const res = await getText(s.base, "/v1/health");
      assert.equal(res.status, 200);
    });
    await t.step("a 401 keeps the connection alive", async () => {
      const c = await RawClient.open(s.port);
      try {
        await c.send(rawPost("/v1/decide", '{"state": "x"}'));
        assert.equal((await c.response()).status, 401);
        await c.send(
          rawPost(
            "/v1/decide",
            '{"state": "x"}',
            `X-Service-Token: ${TOKEN}\r\n`,
          ),
        );
        assert.equal((await c.response()).status, 200);
      } finally {
        c.close();
      }
    });
  });
});

Deno.test("serve reads the token from the variable --token-env names", async () => {
  await withServer({
    args: ["--token-env", "MY_TABLE_TOKEN"],
    env: { MY_TABLE_TOKEN: "other-token", SERVICE_PROXY_TOKEN: "ignored" },
    permissions: [
      "--allow-net=127.0.0.1",
      "--allow-read",
      "--allow-env=MY_TABLE_TOKEN",
    ],
  }, async (s) => {
    assert.equal(
      (await statusOf(s.base, "GET", "/v1/stats", {
        "X-Service-Token": "ignored",
      })).status,
      401,
    );
    const ok = await statusOf(s.base, "GET", "/v1/stats", {
      "X-Service-Token": "other-token",
    });
    assert.equal(ok.status, 200);
    await ok.body?.cancel();
  });
});

Deno.test("serve re-reads --token-file on every request and fails closed when it is emptied", async () => {
  await using dir = await tempDir();
  const tokenFile = `${dir.path}/token.txt`;
  await Deno.writeTextFile(tokenFile, "file-token-1\n");
  const bundle = await writeTestBundle(`${dir.path}/bundle`);
  const s = await startServer({
    bundle,
    args: ["--token-file", tokenFile],
    env: { SERVICE_PROXY_TOKEN: "env-token-is-not-used" },
    permissions: [
      "--allow-net=127.0.0.1",
      `--allow-read=${bundle},${tokenFile}`,
    ],
  });
  try {
    const status = async (token: string | null) => {
      const res = await fetch(`${s.base}/v1/stats`, {
        headers: token === null ? {} : { "X-Service-Token": token },
      });
      await res.body?.cancel();
      return res.status;
    };
    assert.match(s.output().stdout, /access token: set, from file/);
    assert.equal(await status("file-token-1"), 200);
    assert.equal(await status("env-token-is-not-used"), 401);
    await Deno.writeTextFile(tokenFile, "file-token-2");
    assert.equal(await status("file-token-1"), 401);
    assert.equal(await status("file-token-2"), 200);
    await Deno.writeTextFile(tokenFile, "");
    assert.equal(await status("file-token-2"), 401);
    assert.equal(await status(""), 401);
    assert.equal(await status(null), 401);
    const health = await getText(s.base, "/v1/health");
    assert.equal(health.status, 200);
    await Deno.writeTextFile(tokenFile, "file-token-3");
    assert.equal(await status("file-token-3"), 200);
  } finally {
    const end = await s.stop();
    assert.match(end.stderr, /warning: Token file .* is empty/);
  }
});

Deno.test("serve stops quietly with exit code 0 on SIGINT and SIGTERM", async (t) => {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`);
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    await t.step(signal, async () => {
      const s = await startServer({ bundle });
      const c = await RawClient.open(s.port);
      await c.send(rawPost("/v1/decide", '{"state": "x"}'));
      await c.response();
      const end = await s.stop(signal);
      c.close();
      assert.equal(end.code, 0);
      assert.equal(end.stderr, "");
    });
  }
});

Deno.test("serve starts on a non-local address without a token, with a warning", async () => {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`);
  const permissions = [
    "--allow-net=0.0.0.0,127.0.0.1",
    "--allow-read",
    "--allow-env=SERVICE_PROXY_TOKEN",
  ];
  for (const token of ["", TOKEN]) {
    const s = await startServer({
      bundle,
      host: "0.0.0.0",
      permissions,
      env: { SERVICE_PROXY_TOKEN: token },
    });
    const health = await getText(s.base, "/v1/health");
    const end = await s.stop();
    assert.equal(health.status, 200, "it starts and serves");
    if (token === "") {
      assert.match(
        end.stderr,
        /^warning: 0\.0\.0\.0 is reachable from other machines and no access token is set/,
      );
    } else assert.equal(end.stderr, "");
  }
});

Deno.test("serve fails in one line with exit code 2 on startup errors", async (t) => {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`);
  const oneLineExit2 = (
    end: { code: number; stderr: string },
    pattern: RegExp,
  ) => {
    assert.equal(end.code, 2, end.stderr);
    assert.equal(end.stderr.trimEnd().split("\n").length, 1, end.stderr);
    assert.match(end.stderr, pattern);
  };
  await t.step("a busy port", async () => {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    try {
      const port = (listener.addr as Deno.NetAddr).port;
      oneLineExit2(
        await runServe(["--bundle", bundle, "--port", String(port)]),
        /cannot listen on http:\/\/127\.0\.0\.1:\d+\/.*(in use|AddrInUse).*another process holds port \d+: .*--port N \(--port 0 picks a free one\)/i,
      );
    } finally {
      listener.close();
    }
  });
  await t.step("a bad address", async () => {
    oneLineExit2(
      await runServe([
        "--bundle",
        bundle,
        "--host",
        "999.1.1.1",
        "--port",
        "0",
      ]),
      /cannot listen on/,
    );
  });
  await t.step("a missing bundle", async () => {
    oneLineExit2(
      await runServe(["--bundle", `${dir.path}/nothing`]),
      /Cannot load bundle .*no such folder/,
    );
  });
  await t.step("a damaged bundle", async () => {
    const damaged = await writeTestBundle(`${dir.path}/damaged`);
    const weights = await Deno.readFile(`${damaged}/weights.bin`);
    const middle = weights.length >> 1;
    weights[middle] = weights[middle]! ^ 0xff;
    await Deno.writeFile(`${damaged}/weights.bin`, weights);
    oneLineExit2(await runServe(["--bundle", damaged]), /Cannot load bundle/);
  });
  await t.step("no --bundle", async () => {
    oneLineExit2(await runServe([]), /serve needs --bundle DIR/);
  });
  await t.step("an unknown flag", async () => {
    oneLineExit2(
      await runServe(["--bundle", bundle, "--verbose"]),
      /^error: unknown flag --verbose \(see serve --help\)/,
    );
  });
  await t.step("a mistyped flag, with what it most likely meant", async () => {
    oneLineExit2(
      await runServe(["--bundle", bundle, "--prot", "8010"]),
      /^error: unknown flag --prot \(did you mean --port\?\) \(see serve --help\)/,
    );
  });
  await t.step("a bad port", async () => {
    oneLineExit2(
      await runServe(["--bundle", bundle, "--port", "70000"]),
      /--port must be an integer from 0 to 65535/,
    );
  });
  await t.step("a bad drift override", async () => {
    oneLineExit2(
      await runServe(["--bundle", bundle, "--drift-delta", "2"]),
      /--drift-delta must be in \(0, 1\)/,
    );
  });
  await t.step("a limit that is not a positive integer", async () => {
    for (
      const flag of [
        "--body-timeout-ms",
        "--max-in-flight",
        "--drain-ms",
      ]
    ) {
      oneLineExit2(
        await runServe(["--bundle", bundle, flag, "0"]),
        new RegExp(`${flag} must be a positive integer: got "0"`),
      );
    }
    oneLineExit2(
      await runServe(["--bundle", bundle, "--word-cache-mb=-1"]),
      /--word-cache-mb must be a number of MiB from 0 to 65536/,
    );
  });
  await t.step("a negative cost", async () => {
    oneLineExit2(
      await runServe(["--bundle", bundle, "--cost-per-call=-1"]),
      /--cost-per-call must be a number at least 0/,
    );
  });
  await t.step("an unreadable token file", async () => {
    oneLineExit2(
      await runServe([
        "--bundle",
        bundle,
        "--token-file",
        `${dir.path}/no-token`,
      ]),
      /Cannot read token file/,
    );
  });
  await t.step("a token variable it may not read", async () => {
    oneLineExit2(
      await runServe(["--bundle", bundle], [
        "--allow-net",
        `--allow-read=${bundle}`,
      ]),
      /Cannot read environment variable SERVICE_PROXY_TOKEN.*--allow-env=SERVICE_PROXY_TOKEN/,
    );
  });
  await t.step("--help prints the flags and exits 0", async () => {
    const end = await runServe(["--help"]);
    assert.equal(end.code, 0);
    for (
      const flag of [
        "--bundle",
        "--host",
        "--port",
        "--token-env",
        "--token-file",
        "--cost-per-call",
        "--llm-latency-ms",
        "--keep-text",
        "--word-cache-mb",
        "--body-timeout-ms",
        "--max-in-flight",
        "--drain-ms",
      ]
    ) {
      assert.ok(end.stdout.includes(flag), flag);
    }
  });
});

Deno.test("serve works with only --allow-net=HOST:PORT, --allow-read=BUNDLE,TOKENFILE and --allow-env=TOKENVAR", async () => {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`);
  const tokenFile = `${dir.path}/token`;
  await Deno.writeTextFile(tokenFile, "locked");
  const start = async (attempt: number): Promise<RunningServer> => {
    const port = freePort();
    try {
      return await startServer({
        bundle,
        port,
        args: [
          "--token-file",
          tokenFile,
          "--keep-text",
          "--cost-per-call",
          "0.01",
          "--llm-latency-ms",
          "900",
        ],
        permissions: [
          `--allow-net=127.0.0.1:${port}`,
          `--allow-read=${bundle},${tokenFile}`,
          "--allow-env=SERVICE_PROXY_TOKEN",
        ],
      });
    } catch (e) {
      // Another process may have taken the free port in the meantime.
      if (attempt >= 3) throw e;
      return await start(attempt + 1);
    }
  };
  const s = await start(0);
  try {
    const h = { "X-Service-Token": "locked" };
    const routes: [string, string, unknown][] = [
      ["POST", "/v1/decide", { state: CLEAR }],
      ["POST", "/v1/decisions", {
        input: CLEAR,
        questions: [{ type: "choice", name: "topic" }],
      }],
      ["POST", "/v1/altdecisions", {
        state: CLEAR,
        questions: { urgent: { type: "noul" } },
      }],
      ["POST", "/v1/playground", { question: "topic", text: CLEAR }],
      ["GET", "/", null],
      ["GET", "/v1/stats", null],
      ["GET", "/metrics", null],
      ["GET", "/v1/health", null],
    ];
    for (const [method, path, body] of routes) {
      const res = await fetch(`${s.base}${path}`, {
        method,
        headers: h,
        ...(body === null ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      assert.equal(res.status, 200, `${method} ${path}: ${text}`);
    }
    const stats = JSON.parse((await getText(s.base, "/v1/stats", h)).text);
    assert.equal(stats.recent[0].text, CLEAR);
    assert.equal(stats.savings.money_saved, 0.01 * stats.counts.certified);
  } finally {
    const end = await s.stop();
    assert.equal(end.code, 0);
    assert.doesNotMatch(end.stderr, /NotCapable|PermissionDenied|requires/i);
  }
});

const noPromtool = missingTool(
  "http_server_test",
  "promtool",
  "apt-get install prometheus",
);

Deno.test({
  name: "serve's /metrics passes promtool check metrics",
  ignore: noPromtool !== null,
}, async (t) => {
  await withServer({}, async (s) => {
    const check = async () => {
      const metrics = (await getText(s.base, "/metrics")).text;
      const { code, report } = await promtoolCheck(metrics);
      assert.equal(code, 0, report);
      assert.equal(report.trim(), "", report);
    };
    await t.step("before any request", check);
    await postJson(s.base, "/v1/decide", { state: CLEAR });
    await postJson(s.base, "/v1/decide", { state: "" });
    await postJson(s.base, "/v1/decide", '{"bad');
    await postJson(s.base, "/v1/altdecisions", {
      state: CLEAR,
      questions: { 'we"ird\\name': { type: "score" } },
    });
    await t.step("after decisions, deferrals and errors", check);
  });
});

Deno.test("deno.json runs the service with the V8 flags serve documents", async () => {
  const { SERVE_V8_FLAGS } = await import("../src/cli/serve.ts");
  const tasks = JSON.parse(
    await Deno.readTextFile(new URL("../deno.json", import.meta.url)),
  ).tasks as Record<string, string>;
  for (const task of ["serve", "demo"]) {
    assert.ok(
      tasks[task]!.includes(`--v8-flags=${SERVE_V8_FLAGS}`),
      `${task}: ${tasks[task]}`,
    );
  }
  // The compile task bakes the flags into the binary through its wrapper.
  const { BINARY_PERMISSIONS } = await import("../scripts/compile.ts");
  assert.ok(
    (BINARY_PERMISSIONS as readonly string[]).includes(
      `--v8-flags=${SERVE_V8_FLAGS}`,
    ),
  );
});
