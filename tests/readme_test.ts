/**
 * The README's first screen works as written: on a machine where `deno` is
 * not on PATH (only npx, as after the README's set-up), its commands, run in
 * order, install `dtable` from a fresh copy of the project (into a
 * temporary home) and take traces of the user's own, in a folder of
 * their own, to a served bundle that certifies, which the README's `curl`
 * then asks.
 *
 * npx itself is replaced by a stand-in that runs this machine's Deno for
 * `npx --yes deno@VERSION ...` (the version `.ci/run` pins), so the test
 * needs no network.
 */

import assert from "node:assert/strict";
import { demoTraces } from "../scripts/build-demo.ts";
import { networkEnv, tempDir } from "./_fixtures.ts";
import { freePort } from "./_http_helpers.ts";

const ROOT = new URL("../", import.meta.url);
const read = (path: string) => Deno.readTextFile(new URL(path, ROOT));

/** The shell commands of the README from "## Set up" to "### Trace formats", in order. */
async function firstScreenCommands(): Promise<string[]> {
  const readme = await read("README.md");
  const start = readme.indexOf("## Set up");
  const end = readme.indexOf("### Trace formats");
  assert.ok(start >= 0 && end > start, "the README has its first screen");
  const blocks = [...readme.slice(start, end).matchAll(/```sh\n([\s\S]*?)```/g)]
    .map((m) => m[1]!);
  return blocks.flatMap((b) =>
    b.replace(/\\\n/g, " ").split("\n").map((l) => l.trim()).filter((l) =>
      l !== "" && !l.startsWith("#")
    )
  );
}

/** Copies the files a clone has and the commands need. */
async function cloneProject(to: string): Promise<void> {
  const copy = async (rel: string) => {
    const from = new URL(rel, ROOT);
    const info = await Deno.stat(from);
    if (info.isDirectory) {
      await Deno.mkdir(`${to}/${rel}`, { recursive: true });
      for await (const e of Deno.readDir(from)) await copy(`${rel}/${e.name}`);
    } else {
      await Deno.copyFile(from, `${to}/${rel}`);
    }
  };
  await Deno.mkdir(to, { recursive: true });
  for (
    const rel of [
      "deno.json",
      "deno.lock",
      "main.ts",
      "src",
      "static",
      "scripts",
    ]
  ) {
    await copy(rel);
  }
}

/** PATH without any folder that holds a `deno`, with `bin` first. */
async function pathWithoutDeno(bin: string): Promise<string> {
  const kept: string[] = [bin];
  for (const dir of (Deno.env.get("PATH") ?? "/usr/bin:/bin").split(":")) {
    try {
      await Deno.stat(`${dir}/deno`);
    } catch {
      if (dir !== "") kept.push(dir);
    }
  }
  return kept.join(":");
}

Deno.test("the README's first screen takes a newcomer from the set-up to a served bundle of their own traces", async () => {
  const pinned = (await read(".ci/run")).match(/^DENO_VERSION=(\S+)$/m)?.[1];
  assert.ok(pinned, ".ci/run pins a Deno version");
  const commands = await firstScreenCommands();
  // The set-up commands themselves: the demo serves until stopped (tested in
  // tasks_test.ts) and the tests are this very suite.
  const setUp = commands.filter((c) => / task (demo|test)$/.test(c));
  assert.deepEqual(setUp, [
    `npx --yes deno@${pinned} task demo`,
    `npx --yes deno@${pinned} task test`,
  ]);
  const steps = commands.filter((c) => !setUp.includes(c));
  const install = steps.findIndex((c) =>
    c === `npx --yes deno@${pinned} task install`
  );
  assert.ok(install >= 0, "the first screen installs dtable");
  assert.equal(
    steps[install + 1],
    'export PATH="$HOME/.dtable/bin:$PATH"',
    "the line after the install puts dtable on PATH",
  );
  const serveAt = steps.findIndex((c) => /^dtable serve /.test(c));
  assert.ok(serveAt > install, "the first screen ends by serving");
  const curls = steps.slice(serveAt + 1);
  assert.ok(
    curls.length > 0 && curls.every((c) => c.startsWith("curl ")),
    "after serving, the first screen asks the server with curl",
  );

  await using dir = await tempDir();
  const clone = `${dir.path}/clone`;
  const bin = `${dir.path}/bin`;
  await cloneProject(clone);
  await Deno.mkdir(bin);
  await Deno.writeTextFile(
    `${bin}/npx`,
    `#!/bin/sh
# Stands in for npx: "npx --yes deno@${pinned} ARGS" runs this machine's Deno.
if [ "$1" = "--yes" ] && [ "$2" = "deno@${pinned}" ]; then
  shift 2
  exec '${Deno.execPath()}' "$@"
fi
echo "npx stand-in: unexpected arguments: $*" >&2
exit 127
`,
  );
  await Deno.chmod(`${bin}/npx`, 0o755);
  // The user's own traces, in a folder of their own: made as the demo's
  // are, with another seed, and enough of them to certify.
  const work = `${dir.path}/work`;
  await Deno.mkdir(work);
  const traces = demoTraces(12_000, 8);
  await Deno.writeTextFile(
    `${work}/traces.jsonl`,
    traces.slice(0, 11_700).join("\n") + "\n",
  );
  await Deno.writeTextFile(
    `${work}/fresh-traces.jsonl`,
    traces.slice(11_700).join("\n") + "\n",
  );

  const path = await pathWithoutDeno(bin);
  const env = {
    PATH: path,
    // A home of its own: dtable is installed in it (~/.dtable).
    HOME: `${dir.path}/home`,
    ...networkEnv(),
    NO_COLOR: "1",
    SERVICE_PROXY_TOKEN: "",
  };
  await Deno.mkdir(env.HOME);
  const noDeno = await new Deno.Command("bash", {
    args: ["-c", "command -v deno"],
    env,
    clearEnv: true,
    stdout: "null",
    stderr: "null",
  }).output();
  assert.notEqual(
    noDeno.code,
    0,
    "deno is not on PATH before the README's steps",
  );

  // Every step in one shell, as typed: the install in the clone, the rest
  // in the user's folder; serving replaces the shell, on a free port so
  // that it runs beside other servers.
  const port = freePort();
  const script = [
    "set -euo pipefail",
    `cd '${clone}'`,
    ...steps.slice(0, install + 1),
    `cd '${work}'`,
    ...steps.slice(install + 1, serveAt),
    `exec ${steps[serveAt]} --port ${port}`,
  ].join("\n");
  const child = new Deno.Command("bash", {
    args: ["-c", script],
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = child.output();
  let exited = false;
  child.status.then(() => (exited = true));
  try {
    const base = `http://127.0.0.1:${port}`;
    let health: Response | null = null;
    const deadline = Date.now() + 120_000;
    while (health === null && !exited && Date.now() < deadline) {
      try {
        health = await fetch(`${base}/v1/health`);
      } catch {
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    assert.ok(health, "the served bundle answered");
    assert.deepEqual((await health.json()).questions, ["topic", "wants_human"]);
    for (const curl of curls) {
      const asked = await new Deno.Command("bash", {
        args: ["-c", curl.replaceAll("127.0.0.1:8010", `127.0.0.1:${port}`)],
        env,
        clearEnv: true,
        stdout: "piped",
        stderr: "piped",
      }).output();
      const reply = new TextDecoder().decode(asked.stdout);
      assert.equal(asked.code, 0, `${curl}: ${reply}`);
      const topic = JSON.parse(reply).answers.topic;
      assert.equal(topic.choice, "delivery", reply);
      assert.equal(topic.certified, true, reply);
    }
  } finally {
    try {
      child.kill("SIGINT");
    } catch {
      // already gone
    }
    const out = await output;
    const text = new TextDecoder().decode(out.stdout) +
      new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, text);
    assert.match(text, /wrote .*my-bundle/, "train wrote the bundle");
    assert.match(text, /certified/, "eval reported");
  }
});
