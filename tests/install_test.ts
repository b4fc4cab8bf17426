/**
 * The installed command: `deno task install` (the README's install line)
 * puts `dtable` on PATH under narrow permissions, and `dtable` works from
 * any folder, its paths taken from where it is typed.
 */

import assert from "node:assert/strict";
import { dirname } from "node:path";
import {
  exists,
  pick,
  rng,
  syntheticTraces,
  tempDir,
  TOPICS,
} from "./_fixtures.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/** The install task of deno.json. */
async function installLine(): Promise<string> {
  const config = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
  return config.tasks.install;
}

/** Traces as CSV text (text, topic), with a share `wrong` of topics replaced by another option. */
function csvTraces(count: number, seed: number, wrong: number): string {
  const random = rng(seed + 1000);
  const rows = syntheticTraces({ count, seed, noise: 0 }).map((t) => {
    let topic = String(t.answers.topic);
    if (random() < wrong) {
      topic = pick(random, TOPICS.filter((o) => o !== topic));
    }
    return `"${t.text}",${topic}`;
  });
  return `text,topic\n${rows.join("\n")}\n`;
}

/** Runs `dtable ARGS` in `cwd` with only `bin` and Deno's folder on PATH (and no INIT_CWD). */
async function dtable(
  bin: string,
  cwd: string,
  args: string[],
  stdin?: string,
) {
  const child = new Deno.Command(`${bin}/dtable`, {
    args,
    cwd,
    clearEnv: true,
    env: {
      PATH: `${bin}:${dirname(Deno.execPath())}:/usr/bin:/bin`,
      HOME: Deno.env.get("HOME") ?? cwd,
      ...(Deno.env.get("DENO_DIR")
        ? { DENO_DIR: Deno.env.get("DENO_DIR")! }
        : {}),
      NO_COLOR: "1",
    },
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
  }
  const out = await child.output();
  const dec = new TextDecoder();
  return {
    code: out.code,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
  };
}

Deno.test("the install line grants only what the commands need", async () => {
  const line = await installLine();
  assert.match(line, /^deno install --global /);
  assert.match(line, / --name dtable /);
  const flags = line.split(/\s+/).filter((w) => /^--allow-|^-A$/.test(w));
  assert.deepEqual(flags.sort(), [
    "--allow-env=SERVICE_PROXY_TOKEN",
    "--allow-net",
    "--allow-read",
    "--allow-write",
  ]);
});

Deno.test("dtable, installed from the clone, works from another folder", async (t) => {
  await using dir = await tempDir();
  const installed = await new Deno.Command(Deno.execPath(), {
    args: ["task", "install"],
    cwd: ROOT,
    env: { DENO_INSTALL_ROOT: dir.path, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(
    installed.code,
    0,
    new TextDecoder().decode(installed.stderr),
  );
  const bin = `${dir.path}/bin`;
  assert.ok(await exists(`${bin}/dtable`), "dtable is installed");
  const work = `${dir.path}/work`;
  await Deno.mkdir(`${work}/logs`, { recursive: true });
  await Deno.writeTextFile(
    `${work}/logs/traces.csv`,
    csvTraces(1500, 3, 0.01),
  );

  await t.step("train writes the bundle where it is typed", async () => {
    const run = await dtable(bin, `${work}/logs`, [
      "train",
      "--traces",
      "traces.csv",
      "--quiet",
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.ok(await exists(`${work}/logs/bundle/manifest.json`), run.stdout);
    assert.match(run.stdout, /^wrote bundle /m);
  });

  await t.step(
    "eval, inspect and predict read paths from there too",
    async () => {
      const evaluated = await dtable(bin, work, [
        "eval",
        "--bundle",
        "logs/bundle",
        "--traces",
        "logs/traces.csv",
        "--json",
      ]);
      assert.equal(evaluated.code, 0, evaluated.stderr);
      const figures = JSON.parse(evaluated.stdout);
      assert.ok(figures.questions.topic.certified > 0);
      const inspected = await dtable(bin, work, [
        "inspect",
        "--bundle",
        "logs/bundle",
      ]);
      assert.equal(inspected.code, 0, inspected.stderr);
      assert.match(
        inspected.stdout,
        new RegExp(`topic \\(choice, ${TOPICS.length} options\\)`),
      );
      const predicted = await dtable(
        bin,
        work,
        ["predict", "--bundle", "logs/bundle"],
        "my invoice shows a fee twice\nwhere is my parcel\n",
      );
      assert.equal(predicted.code, 0, predicted.stderr);
      const lines = predicted.stdout.trimEnd().split("\n").map((l) =>
        JSON.parse(l)
      );
      assert.deepEqual(lines.map((l) => l.answers.topic.choice), [
        "billing",
        "shipping",
      ]);
    },
  );

  await t.step("serve serves the bundle and its dashboard", async () => {
    const child = new Deno.Command(`${bin}/dtable`, {
      args: ["serve", "--bundle", "logs/bundle", "--port", "0"],
      cwd: work,
      clearEnv: true,
      env: {
        PATH: `${bin}:${dirname(Deno.execPath())}:/usr/bin:/bin`,
        HOME: Deno.env.get("HOME") ?? work,
        ...(Deno.env.get("DENO_DIR")
          ? { DENO_DIR: Deno.env.get("DENO_DIR")! }
          : {}),
        NO_COLOR: "1",
      },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const draining = child.stderr.pipeTo(new WritableStream());
    let banner = "";
    let base: string | undefined;
    try {
      for await (
        const chunk of child.stdout.pipeThrough(new TextDecoderStream())
      ) {
        banner += chunk;
        base = /listening on (http:\/\/127\.0\.0\.1:\d+)\//.exec(banner)?.[1];
        if (base !== undefined) break;
      }
      assert.ok(base, banner);
      const health = await (await fetch(`${base}/v1/health`)).json();
      assert.deepEqual(health.questions, ["topic"]);
      const page = await fetch(`${base}/`);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /<html/);
    } finally {
      child.kill("SIGINT");
      await child.status;
      await draining.catch(() => {});
    }
  });

  await t.step(
    "train on traces with 35% wrong labels exits 3 and writes no bundle",
    async () => {
      await Deno.mkdir(`${work}/noisy`);
      await Deno.writeTextFile(
        `${work}/noisy/traces.csv`,
        csvTraces(3000, 5, 0.35),
      );
      const run = await dtable(bin, `${work}/noisy`, [
        "train",
        "--traces",
        "traces.csv",
        "--quiet",
      ]);
      assert.equal(run.code, 3, run.stdout + run.stderr);
      assert.equal(await exists(`${work}/noisy/bundle`), false);
      const last = run.stdout.trimEnd().split("\n").at(-1)!;
      assert.match(
        last,
        /^1 of 1 question uncalibrated, never certified \(topic: .*what would help: topic: .*no bundle written \(exit code 3\)$/,
      );
      const allowed = await dtable(bin, `${work}/noisy`, [
        "train",
        "--traces",
        "traces.csv",
        "--quiet",
        "--allow-uncalibrated",
      ]);
      assert.equal(allowed.code, 0, allowed.stderr);
      assert.ok(await exists(`${work}/noisy/bundle/manifest.json`));
    },
  );
});
