/**
 * Bodies in flight bounded per client address, on the real server: one
 * address holding many slow bodies gets 503 past its bound, and a request
 * from another address is still answered. Before, without a token, 256
 * slow bodies from one client filled `--max-in-flight` and nearly every
 * other request got 503.
 */

import assert from "node:assert/strict";
import { tempDir } from "./_fixtures.ts";
import { RawClient, startServer, writeTestBundle } from "./_http_helpers.ts";

/** POSTs a decision with curl from source address `from`; the status. */
async function curlFrom(from: string, base: string): Promise<string> {
  const out = await new Deno.Command("curl", {
    args: [
      "-s",
      "-o",
      "/dev/null",
      "-w",
      "%{http_code}",
      "--interface",
      from,
      "-X",
      "POST",
      "--data",
      JSON.stringify({ state: "my invoice was overcharged" }),
      `${base}/v1/decide`,
    ],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout);
}

async function hasCurl(): Promise<boolean> {
  try {
    return (await new Deno.Command("curl", {
      args: ["--version"],
      stdout: "null",
    })
      .output()).success;
  } catch {
    return false;
  }
}

Deno.test({
  name:
    "a client holding slow bodies is refused past its bound while other addresses are served",
  // Needs curl (to send from another loopback address) and Linux's 127/8 loopback.
  ignore: Deno.build.os !== "linux" || !(await hasCurl()),
}, async () => {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`);
  const server = await startServer({
    bundle,
    args: [
      "--max-in-flight",
      "16",
      "--max-bodies-per-client",
      "4",
      "--body-timeout-ms",
      "30000",
    ],
  });
  const held: RawClient[] = [];
  try {
    // 20 requests announcing a body that never comes, from 127.0.0.1.
    for (let i = 0; i < 20; i++) {
      const c = await RawClient.open(server.port);
      held.push(c);
      await c.send(
        "POST /v1/decide HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{",
      );
    }
    // 16 of them are refused at once; 4 are held, their bodies awaited.
    const statuses = await Promise.all(
      held.map((c) => c.response(2000).then((r) => r.status, () => null)),
    );
    assert.equal(statuses.filter((s) => s === 503).length, 16);
    assert.equal(statuses.filter((s) => s === null).length, 4);
    // Another address is served; the holder's address is not.
    assert.equal(await curlFrom("127.0.0.2", server.base), "200");
    assert.equal(await curlFrom("127.0.0.1", server.base), "503");
    const stats = await (await fetch(`${server.base}/v1/stats`)).json();
    assert.ok(stats.transport.client_body_refusals >= 17);
  } finally {
    for (const c of held) c.close();
    await server.stop();
  }
});
