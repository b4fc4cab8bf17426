/**
 * The installed command: the README's two install lines (`npx --yes
 * deno@VERSION task install`, then the PATH line for the shell's profile)
 * install `dtable` so that it lasts: in a new login shell with a clean
 * environment, after the clone and the npm cache that held Deno are
 * deleted, `dtable` trains, evaluates, inspects, predicts and serves from
 * any folder, its paths taken from where it is typed, under the
 * permissions the tasks have.
 */

import assert from "node:assert/strict";
import {
  installTo,
  PROGRAM_FILES,
  SHIM_FLAGS,
  shimText,
} from "../scripts/install.ts";
import { freePort } from "./_http_helpers.ts";
import {
  exists,
  networkEnv,
  pick,
  rng,
  syntheticTraces,
  tempDir,
  TOPICS,
} from "./_fixtures.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/** The README's install block: the install line and the PATH line for the profile. */
async function readmeInstallLines(): Promise<string[]> {
  const readme = await Deno.readTextFile(`${ROOT}README.md`);
  const block = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)]
    .map((m) => m[1]!)
    .find((b) => / task install\n/.test(b));
  assert.ok(block, "the README has an install block");
  return block.trim().split("\n").map((l) => l.trim());
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

/** What a command printed and returned. */
interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `script` in a new login shell with a clean environment (only HOME),
 * as a user's new terminal would: `env -i HOME=HOME bash -l -c ...`.
 */
async function loginShell(
  home: string,
  script: string,
  stdin?: string,
): Promise<Ran> {
  const child = new Deno.Command("env", {
    args: ["-i", `HOME=${home}`, "bash", "-l", "-c", script],
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

Deno.test("the dtable shim names absolute paths only and grants what the commands need", () => {
  const text = shimText("/home/u/.dtable/lib/0.2.0-abcd1234");
  const run = text.split("\n").find((l) => l.startsWith("exec "))!;
  const words = run.split(/\s+/);
  assert.equal(words[1], "'/home/u/.dtable/lib/0.2.0-abcd1234/deno'");
  assert.deepEqual(
    words.filter((w) => /^--allow-|^-A$/.test(w)).sort(),
    [
      "--allow-env=SERVICE_PROXY_TOKEN",
      "--allow-net",
      "--allow-read",
      "--allow-write",
    ],
  );
  for (const flag of SHIM_FLAGS) assert.ok(words.includes(flag), flag);
  assert.ok(words.includes("--cached-only"), "nothing is fetched at run time");
  assert.match(
    text,
    /^DENO_DIR='\/home\/u\/\.dtable\/lib\/0\.2\.0-abcd1234\/deno-dir'$/m,
  );
  assert.match(
    run,
    /--config '[^']*\/app\/deno\.json' '[^']*\/app\/main\.ts' "\$@"$/,
  );
});

Deno.test("dtable, installed by the README's lines, lasts: a new shell, the npm cache and the clone gone", async (t) => {
  const [installLine, profileLine, ...rest] = await readmeInstallLines();
  assert.deepEqual(rest, [], "two install lines");
  const pinned = installLine!.match(/^npx --yes deno@(\S+) task install$/)
    ?.[1];
  assert.ok(pinned, installLine);
  assert.equal(profileLine, 'export PATH="$HOME/.dtable/bin:$PATH"');

  await using dir = await tempDir();
  const home = `${dir.path}/home`;
  const clone = `${dir.path}/clone`;
  const npmCache = `${dir.path}/npm-cache`;
  const stubs = `${dir.path}/stubs`;
  for (const d of [home, clone, npmCache, stubs]) await Deno.mkdir(d);
  for (const f of [...PROGRAM_FILES, "scripts"]) {
    await new Deno.Command("cp", { args: ["-R", `${ROOT}${f}`, clone] })
      .output();
  }
  // npx stands in for the real one: its cache holds a copy of this
  // machine's Deno, which the test deletes after the install.
  await Deno.copyFile(Deno.execPath(), `${npmCache}/deno`);
  await Deno.chmod(`${npmCache}/deno`, 0o755);
  await Deno.writeTextFile(
    `${stubs}/npx`,
    `#!/bin/sh
if [ "$1" = "--yes" ] && [ "$2" = "deno@${pinned}" ]; then
  shift 2
  exec '${npmCache}/deno' "$@"
fi
echo "npx stand-in: unexpected arguments: $*" >&2
exit 127
`,
  );
  await Deno.chmod(`${stubs}/npx`, 0o755);

  await t.step("the install line installs, with no warning", async () => {
    const shell = `${installLine}\n${profileLine}\ncommand -v dtable`;
    const out = await new Deno.Command("bash", {
      args: ["-c", `set -eu\ncd '${clone}'\n${shell}`],
      clearEnv: true,
      env: {
        HOME: home,
        PATH: `${stubs}:/usr/bin:/bin`,
        ...networkEnv(),
        NO_COLOR: "1",
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const said = new TextDecoder().decode(out.stdout) +
      new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, said);
    assert.doesNotMatch(said, /warning|ignored/i, said);
    assert.match(said, /^installed dtable /m);
    assert.match(said, new RegExp(`^${home}/\\.dtable/bin/dtable$`, "m"));
  });

  // The clone and the npm cache are deleted; the profile holds the
  // README's PATH line, as the README asks.
  await Deno.remove(clone, { recursive: true });
  await Deno.remove(npmCache, { recursive: true });
  await Deno.remove(stubs, { recursive: true });
  await Deno.writeTextFile(`${home}/.profile`, `${profileLine}\n`);
  const work = `${dir.path}/work`;
  await Deno.mkdir(`${work}/logs`, { recursive: true });
  await Deno.writeTextFile(
    `${work}/logs/traces.csv`,
    csvTraces(1500, 3, 0.01),
  );
  const inWork = (cwd: string, line: string, stdin?: string) =>
    loginShell(home, `cd '${cwd}' && ${line}`, stdin);

  await t.step("a new login shell finds dtable", async () => {
    const run = await inWork(work, "dtable --version");
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^decision-tables /);
  });

  await t.step("train writes the bundle where it is typed", async () => {
    const run = await inWork(
      `${work}/logs`,
      "dtable train --traces traces.csv --quiet",
    );
    assert.equal(run.code, 0, run.stderr);
    assert.ok(await exists(`${work}/logs/bundle/manifest.json`), run.stdout);
    assert.match(run.stdout, /^wrote bundle /m);
  });

  await t.step(
    "eval, inspect and predict read paths from there too",
    async () => {
      const evaluated = await inWork(
        work,
        "dtable eval --bundle logs/bundle --traces logs/traces.csv --json",
      );
      assert.equal(evaluated.code, 0, evaluated.stderr);
      const figures = JSON.parse(evaluated.stdout);
      assert.ok(figures.questions.topic.certified > 0);
      const inspected = await inWork(
        work,
        "dtable inspect --bundle logs/bundle",
      );
      assert.equal(inspected.code, 0, inspected.stderr);
      assert.match(
        inspected.stdout,
        new RegExp(`topic \\(choice, ${TOPICS.length} options\\)`),
      );
      const predicted = await inWork(
        work,
        "dtable predict --bundle logs/bundle",
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

  await t.step("serve serves the bundle and answers a request", async () => {
    const port = freePort();
    const child = new Deno.Command("env", {
      args: [
        "-i",
        `HOME=${home}`,
        "bash",
        "-l",
        "-c",
        `cd '${work}' && exec dtable serve --bundle logs/bundle --port ${port}`,
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const output = child.output();
    try {
      const base = `http://127.0.0.1:${port}`;
      let health: Response | null = null;
      const deadline = Date.now() + 60_000;
      while (health === null && Date.now() < deadline) {
        try {
          health = await fetch(`${base}/v1/health`);
        } catch {
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      assert.ok(health, "the server answered");
      assert.deepEqual((await health.json()).questions, ["topic"]);
      const res = await fetch(`${base}/v1/decide`, {
        method: "POST",
        body: JSON.stringify({ state: "where is my parcel" }),
      });
      assert.equal(res.status, 200);
      assert.equal((await res.json()).answers.topic.choice, "shipping");
    } finally {
      try {
        child.kill("SIGINT");
      } catch {
        // already gone
      }
      const out = await output;
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
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
      const run = await inWork(
        `${work}/noisy`,
        "dtable train --traces traces.csv --quiet --semantic off",
      );
      assert.equal(run.code, 3, run.stdout + run.stderr);
      assert.equal(await exists(`${work}/noisy/bundle`), false);
      const last = run.stdout.trimEnd().split("\n").at(-1)!;
      assert.match(
        last,
        /^1 of 1 question uncalibrated, never certified \(topic: .*what would help: topic: .*no bundle written \(exit code 3\)$/,
      );
    },
  );
});

Deno.test("installing again swaps the shim to a new copy and keeps only the one before", async () => {
  await using dir = await tempDir();
  const prefix = `${dir.path}/prefix`;
  const copies: string[] = [];
  for (let i = 0; i < 3; i++) {
    const shim = await installTo(prefix);
    const lib = (await Deno.readTextFile(shim)).match(
      /^DENO_DIR='(.*)\/deno-dir'$/m,
    )?.[1];
    assert.ok(lib);
    copies.push(lib);
  }
  const left: string[] = [];
  for await (const e of Deno.readDir(`${prefix}/lib`)) {
    left.push(`${prefix}/lib/${e.name}`);
  }
  assert.deepEqual(left.sort(), copies.slice(1).sort());
  const run = await new Deno.Command(`${prefix}/bin/dtable`, {
    args: ["--version"],
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(run.code, 0, new TextDecoder().decode(run.stderr));
  assert.match(new TextDecoder().decode(run.stdout), /^decision-tables /);
});
