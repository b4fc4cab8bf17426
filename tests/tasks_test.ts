/**
 * The `deno.json` tasks a newcomer runs first: `deno task demo` serves the
 * demo bundle, on another port with `--port N`, under narrow permissions.
 */

import assert from "node:assert/strict";
import { freePort } from "./_http_helpers.ts";

const ROOT = new URL("../", import.meta.url);

async function tasks(): Promise<Record<string, string>> {
  const config = JSON.parse(
    await Deno.readTextFile(new URL("deno.json", ROOT)),
  );
  return config.tasks;
}

Deno.test("deno task demo keeps its permissions narrow: loopback only, the demo bundle, the token variable", async () => {
  const demo = (await tasks()).demo!;
  const flags = demo.split(/\s+/).filter((w) => /^--allow-|^-A$/.test(w));
  assert.deepEqual(flags.sort(), [
    "--allow-env=SERVICE_PROXY_TOKEN",
    "--allow-net=127.0.0.1",
    "--allow-read=demo/bundle",
  ]);
});

Deno.test("deno task demo --port N serves the demo bundle on port N", async () => {
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "demo", "--port", String(port)],
    cwd: ROOT,
    env: { SERVICE_PROXY_TOKEN: "", NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = child.output();
  let exited = false;
  child.status.then(() => (exited = true));
  try {
    const deadline = Date.now() + 30_000;
    let health: Response | null = null;
    while (health === null && !exited && Date.now() < deadline) {
      try {
        health = await fetch(`http://127.0.0.1:${port}/v1/health`);
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    assert.ok(health, `nothing answered on port ${port}`);
    assert.equal(health.status, 200);
    assert.deepEqual((await health.json()).questions, ["topic", "wants_human"]);
  } finally {
    try {
      child.kill("SIGINT");
    } catch {
      // already gone
    }
    const out = await output;
    const text = new TextDecoder().decode(out.stdout) +
      new TextDecoder().decode(out.stderr);
    assert.match(
      text,
      new RegExp(`listening on http://127\\.0\\.0\\.1:${port}/`),
    );
    assert.equal(out.code, 0, text);
  }
});

Deno.test("deno task demo prints the server's own PID, and killing that PID stops the server (a launcher's PID is another)", async () => {
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "demo", "--port", String(port)],
    cwd: ROOT,
    env: { SERVICE_PROXY_TOKEN: "", NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  let pid: number | null = null;
  try {
    const deadline = Date.now() + 30_000;
    while (pid === null && Date.now() < deadline) {
      const r = await reader.read();
      if (r.done) break;
      seen += r.value;
      const m = /process (\d+): stop it with Ctrl-C or kill \1/.exec(seen);
      if (m) pid = Number(m[1]);
    }
    assert.ok(pid !== null, seen);
    assert.notEqual(
      pid,
      child.pid,
      "the banner names the server, not the task",
    );
    Deno.kill(pid, "SIGTERM");
    const status = await child.status;
    assert.equal(status.code, 0);
    await assert.rejects(fetch(`http://127.0.0.1:${port}/v1/health`));
  } finally {
    try {
      child.kill("SIGINT");
    } catch {
      // gone
    }
    await reader.cancel().catch(() => {});
  }
});
