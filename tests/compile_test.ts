/**
 * `deno task compile` (`scripts/compile.ts`): offline, or when `deno
 * compile` fails for any other reason, one line on stderr, exit code 2, and
 * nothing written (no `dist/`, no partial binary, no scratch folder); on
 * success the binary is moved into place whole.
 */

import assert from "node:assert/strict";
import {
  BINARY_PERMISSIONS,
  compileBinary,
  compileFailure,
  type CompileRunner,
} from "../scripts/compile.ts";
import { freePort } from "./_http_helpers.ts";
import { tempDir } from "./_fixtures.ts";
import { skipped } from "./_tools.ts";

const ROOT = new URL("../", import.meta.url).pathname;

async function entries(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) names.push(e.name);
  return names.sort();
}

/** Runs `deno task compile ARGS` with `env` added; returns what it printed. */
async function compileTask(args: string[], env: Record<string, string>) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "compile", ...args],
    cwd: ROOT,
    env: { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

/** The targets `deno compile` builds for, this machine's first. */
const TARGETS = [
  Deno.build.target,
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
];

/**
 * A target whose runtime this machine has not cached (so compiling for it
 * needs the network), this machine's own when it can; null when every
 * runtime is cached.
 */
async function uncachedTarget(): Promise<string | null> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdout: "piped",
    stderr: "null",
  }).output();
  const { denoDir } = JSON.parse(new TextDecoder().decode(out.stdout));
  for (const target of TARGETS) {
    try {
      await Deno.stat(
        `${denoDir}/dl/release/v${Deno.version.deno}/denort-${target}.zip`,
      );
    } catch {
      return target;
    }
  }
  return null;
}

const target = await uncachedTarget();
if (target === null) {
  skipped("compile_test", "every target's runtime is cached here");
}

Deno.test({
  name:
    "deno task compile without network says so in one line, exits 2 and writes nothing",
  ignore: target === null,
}, async () => {
  await using dir = await tempDir();
  // A proxy nobody listens on: offline, even on a machine with network.
  const proxy = `http://127.0.0.1:${freePort()}`;
  const run = await compileTask([
    "--output",
    `${dir.path}/dist/dtable`,
    "--target",
    target!,
  ], {
    HTTPS_PROXY: proxy,
    HTTP_PROXY: proxy,
    https_proxy: proxy,
    http_proxy: proxy,
    NO_PROXY: "",
    no_proxy: "",
  });
  assert.equal(run.code, 2, run.stderr);
  const lines = run.stderr.trim().split("\n");
  assert.equal(lines.length, 1, run.stderr);
  assert.match(
    lines[0]!,
    /^error: deno compile could not get the Deno runtime it embeds \(https:\/\/dl\.deno\.land\/.*denort.*\.zip\): .+\. Nothing was written$/,
  );
  assert.doesNotMatch(run.stderr, /backtrace/i);
  assert.deepEqual(await entries(dir.path), [], "no dist/, no scratch folder");
});

Deno.test("deno task compile failing for another reason also ends in one line, exit 2, nothing written", async () => {
  await using dir = await tempDir();
  const run = await compileTask(["--output", `${dir.path}/dist/dtable`], {
    DENORT_BIN: `${dir.path}/no-such-denort`,
  });
  assert.equal(run.code, 2, run.stderr);
  assert.equal(run.stderr.trim().split("\n").length, 1, run.stderr);
  assert.match(
    run.stderr,
    /^error: deno compile could not read the runtime DENORT_BIN names: Could not find denort at '.*no-such-denort': .+\. Nothing was written\n$/,
  );
  assert.deepEqual(await entries(dir.path), []);
});

Deno.test("deno task compile refuses an unknown flag in one line, exit 2", async () => {
  const run = await compileTask(["--outptu", "x"], {});
  assert.equal(run.code, 2);
  assert.match(run.stderr, /^error: .*--outptu.*\n$/);
});

/** A stand-in for `deno compile` that writes `bytes` to its --output and exits with `code`. */
function fakeCompile(code: number, bytes = "binary"): {
  run: CompileRunner;
  calls: string[][];
} {
  const calls: string[][] = [];
  return {
    calls,
    run: async (args) => {
      calls.push(args);
      const output = args[args.indexOf("--output") + 1]!;
      await Deno.writeTextFile(output, bytes);
      return { code, stderr: code === 0 ? "" : "error: it broke\n" };
    },
  };
}

Deno.test("compileBinary() moves the binary into place only when deno compile succeeds", async (t) => {
  await using dir = await tempDir();
  const output = `${dir.path}/dist/dtable`;

  await t.step("a success creates the folder and the binary", async () => {
    const fake = fakeCompile(0, "first");
    assert.equal(await compileBinary({ output }, fake.run), output);
    assert.equal(await Deno.readTextFile(output), "first");
    assert.deepEqual(await entries(dir.path), ["dist"]);
    assert.deepEqual(await entries(`${dir.path}/dist`), ["dtable"]);
    const args = fake.calls[0]!;
    assert.deepEqual(args.slice(0, BINARY_PERMISSIONS.length), [
      ...BINARY_PERMISSIONS,
    ]);
    assert.match(args.at(-1)!, /main\.ts$/);
    const include = args.indexOf("--include");
    assert.match(args[include + 1] ?? "", /src\/train\/fit_worker\.ts$/);
  });

  await t.step(
    "a failure keeps the previous binary and leaves no scratch",
    async () => {
      const fake = fakeCompile(1, "partial");
      await assert.rejects(
        compileBinary({ output }, fake.run),
        /deno compile failed: it broke\. Nothing was written/,
      );
      assert.equal(await Deno.readTextFile(output), "first");
      assert.deepEqual(await entries(`${dir.path}/dist`), ["dtable"]);
      assert.deepEqual(await entries(dir.path), ["dist"]);
    },
  );

  await t.step("a later success replaces the binary whole", async () => {
    await compileBinary({ output }, fakeCompile(0, "second").run);
    assert.equal(await Deno.readTextFile(output), "second");
    assert.deepEqual(await entries(`${dir.path}/dist`), ["dtable"]);
  });

  await t.step("an interrupted compile writes nothing", async () => {
    const stop = new AbortController();
    const run: CompileRunner = async (args) => {
      await Deno.writeTextFile(args[args.indexOf("--output") + 1]!, "half");
      stop.abort();
      return { code: 0, stderr: "" };
    };
    await assert.rejects(
      compileBinary({ output, signal: stop.signal }, run),
      /interrupted/,
    );
    assert.equal(await Deno.readTextFile(output), "second");
    assert.deepEqual(await entries(dir.path), ["dist"]);
  });
});

Deno.test("compileFailure() names an unreachable runtime download by its root cause", () => {
  const offline = `Compile main.ts to dist/dtable
Download https://dl.deno.land/release/v2.9.6/denort-x86_64-unknown-linux-gnu.zip
error: Writing deno compile executable to temporary file 'dist/dtable.tmp-8d2c'

Caused by:
    0: Setting up base binary.
    1: error sending request for url (https://dl.deno.land/release/v2.9.6/denort-x86_64-unknown-linux-gnu.zip): client error (Connect): dns error: failed to lookup address information: Name or service not known
    2: client error (Connect)
    3: dns error
    4: failed to lookup address information: Name or service not known

Stack backtrace:
   0: <unknown>
`;
  const line = compileFailure(offline);
  assert.match(
    line,
    /^deno compile could not get the Deno runtime it embeds \(https:\/\/dl\.deno\.land\/release\/v2\.9\.6\/denort-x86_64-unknown-linux-gnu\.zip\): failed to lookup address information: Name or service not known\. /,
  );
  assert.doesNotMatch(line, /\n|<unknown>/);
  assert.equal(
    compileFailure("error: SyntaxError: Expected ',', got '<eof>'\n  |\n"),
    "deno compile failed: SyntaxError: Expected ',', got '<eof>'. Nothing was written",
  );
});
