/**
 * The real server (`main.ts serve` in a child process) when file
 * descriptors run out: started from a shell with `ulimit -n 256`, then 300
 * connections opened at once. The listener fails (`EMFILE`); the process
 * must not exit, must count the failure in `/v1/stats` and `/metrics`, and
 * must answer again once the connections are gone. Before this was
 * handled, `serve` exited with `Too many open files (os error 24)`.
 */

import assert from "node:assert/strict";
import { tempDir } from "./_fixtures.ts";
import { startServer, writeTestBundle } from "./_http_helpers.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Opens `n` connections at once; returns those that opened. */
async function openMany(port: number, n: number): Promise<Deno.Conn[]> {
  const settled = await Promise.allSettled(
    Array.from(
      { length: n },
      () => Deno.connect({ hostname: "127.0.0.1", port }),
    ),
  );
  return settled.flatMap((s) => s.status === "fulfilled" ? [s.value] : []);
}

/** Retries GET `url` until it answers 200 or `tries` run out; the last status or error. */
async function getUntilOk(url: string, tries: number): Promise<string> {
  let last = "";
  for (let i = 0; i < tries; i++) {
    try {
      const res = await fetch(url);
      const text = await res.text();
      if (res.ok) return text;
      last = `status ${res.status}`;
    } catch (e) {
      last = (e as Error).message;
    }
    await sleep(100);
  }
  throw new Error(`${url} never answered 200: ${last}`);
}

Deno.test({
  name: "serve survives running out of file descriptors and answers again",
  // Needs bash and `ulimit` (Linux).
  ignore: Deno.build.os !== "linux",
}, async () => {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`);
  const server = await startServer({ bundle, openFiles: 256 });
  let exit;
  try {
    // A connection opened before the flood, with a request in flight
    // during it (its body arrives after the flood).
    const early = await Deno.connect({
      hostname: "127.0.0.1",
      port: server.port,
    });
    const body = JSON.stringify({ state: "my invoice was overcharged" });
    await early.write(new TextEncoder().encode(
      `POST /v1/decide HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`,
    ));
    for (let round = 0; round < 2; round++) {
      const flood = await openMany(server.port, 300);
      await sleep(500);
      if (round === 0) {
        await early.write(new TextEncoder().encode(body));
        const buf = new Uint8Array(4096);
        const n = await early.read(buf);
        assert.match(
          new TextDecoder().decode(buf.subarray(0, n ?? 0)),
          /^HTTP\/1\.1 200/,
          "a request in flight when descriptors ran out is answered",
        );
        early.close();
      }
      for (const c of flood) c.close();
      const health = JSON.parse(
        await getUntilOk(`${server.base}/v1/health`, 100),
      );
      assert.equal(health.ok, true);
    }
    const stats = JSON.parse(await getUntilOk(`${server.base}/v1/stats`, 50));
    assert.ok(
      stats.transport.accept_errors >= 1,
      `accept errors counted: ${JSON.stringify(stats.transport)}`,
    );
    assert.ok(stats.transport.listener_restarts >= 1);
    assert.match(stats.transport.last_accept_error, /Too many open files/);
    const metrics = await getUntilOk(`${server.base}/metrics`, 50);
    const counted = metrics.match(/^dtable_accept_errors_total (\d+)$/m);
    assert.ok(counted !== null && Number(counted[1]) >= 1);
    const decided = await fetch(`${server.base}/v1/decide`, {
      method: "POST",
      body: JSON.stringify({ state: "my invoice was overcharged" }),
    });
    assert.equal(decided.status, 200);
    await decided.body?.cancel();
  } finally {
    exit = await server.stop();
  }
  assert.equal(exit.code, 0, exit.stderr);
  assert.match(exit.stderr, /warning: cannot accept connections/);
  assert.doesNotMatch(exit.stderr, /^error:/m);
});
