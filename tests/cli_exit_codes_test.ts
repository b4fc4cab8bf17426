/**
 * Exit codes: bad input exits 2 in one line, a bug exits 1 with its stack,
 * for each command and each kind of error the commands throw.
 */

import assert from "node:assert/strict";
import { BundleError } from "../src/bundle/mod.ts";
import { UsageError } from "../src/cli/common.ts";
import { isInputError, reportFailure } from "../src/cli/failure.ts";
import { TrainingError } from "../src/train/mod.ts";
import { type CliRun, runCli, tempDir } from "./_fixtures.ts";

const ROOT = new URL("..", import.meta.url).pathname;

/** What `reportFailure` prints and returns for `e`. */
function reported(e: unknown): { code: number; text: string } {
  const lines: string[] = [];
  const code = reportFailure(e, (l) => lines.push(l));
  return { code, text: lines.join("\n") };
}

/** A real failure of `f`, as JavaScript raises it. */
function caught(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error("expected a failure");
}

/** Asserts a run exited 2 with exactly one `error:` line on stderr. */
function inputFailure(run: CliRun, pattern: RegExp): void {
  assert.equal(run.code, 2, `exit code ${run.code}; stderr ${run.stderr}`);
  const lines = run.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, run.stderr);
  assert.match(lines[0]!, /^error: /);
  assert.match(lines[0]!, pattern);
}

Deno.test("reportFailure() ends input errors in one line with exit code 2", async () => {
  let osError: unknown = new Deno.errors.PermissionDenied("open 'x'");
  try {
    // A real ENOSPC: a plain Error with a code, not a Deno.errors class.
    await Deno.writeFile("/dev/full", new Uint8Array(8));
  } catch (e) {
    osError = e;
  }
  const cases: [string, unknown][] = [
    ["a usage error", new UsageError("train needs --traces FILE")],
    ["a bundle error", new BundleError("Cannot load bundle b: no such folder")],
    ["a training error", new TrainingError('question "topic" has 20 answers')],
    ["a range error", new RangeError("t.jsonl: no trace answers any question")],
    ["a syntax error", caught(() => JSON.parse("{"))],
    ["a missing file", new Deno.errors.NotFound("No such file: t.jsonl")],
    ["a busy port", new Deno.errors.AddrInUse("Address in use")],
    ["what the system refused", osError],
  ];
  for (const [name, e] of cases) {
    assert.equal(isInputError(e), true, name);
    const { code, text } = reported(e);
    assert.equal(code, 2, name);
    assert.equal(text, `error: ${(e as Error).message.trim()}`, name);
    assert.doesNotMatch(text, /\n/, name);
  }
});

Deno.test("reportFailure() ends a bug with its stack and exit code 1", () => {
  const cases: [string, unknown, RegExp][] = [
    [
      "a property of undefined",
      caught(() => (undefined as unknown as { x: number }).x),
      /TypeError: Cannot read properties of undefined/,
    ],
    [
      "an unknown name",
      caught(() => eval("notDefinedAnywhere + 1")),
      /ReferenceError: notDefinedAnywhere is not defined/,
    ],
    [
      "a plain error",
      new Error("A training worker failed: x"),
      /Error: A training worker failed/,
    ],
    ["a thrown string", "oops", /thrown: oops/],
  ];
  for (const [name, e, pattern] of cases) {
    assert.equal(isInputError(e), false, name);
    const { code, text } = reported(e);
    assert.equal(code, 1, name);
    assert.match(
      text,
      /^error: an unexpected failure, a bug in decision-tables/,
    );
    assert.match(text, pattern, name);
    if (e instanceof Error) assert.match(text, /\n +at /, `${name}: stack`);
  }
});

Deno.test("every command exits 2 in one line on input it cannot use", async (t) => {
  await using dir = await tempDir();
  const a = `${dir.path}/a.csv`, b = `${dir.path}/b.csv`;
  await Deno.writeTextFile(a, "text,wants_human\none,true\ntwo,false\n");
  await Deno.writeTextFile(b, "text,wants_human\nthree,maybe\nfour,true\n");
  const kinds =
    /b\.csv: question "wants_human" is a choice .* here but yes\/no in .*a\.csv/;
  await t.step(
    "train: answers of another kind in a second file (the readers' TypeError)",
    async () => {
      inputFailure(
        await runCli([
          "train",
          "--traces",
          a,
          "--traces",
          b,
          "--out",
          `${dir.path}/o`,
        ]),
        kinds,
      );
    },
  );
  await t.step(
    "eval: the same, through the trace flags eval shares",
    async () => {
      inputFailure(
        await runCli([
          "eval",
          "--bundle",
          "demo/bundle",
          "--traces",
          a,
          "--traces",
          b,
        ]),
        kinds,
      );
    },
  );
  await t.step(
    "inspect: a folder that holds no bundle (BundleError)",
    async () => {
      inputFailure(
        await runCli(["inspect", "--bundle", dir.path]),
        /Cannot load bundle/,
      );
    },
  );
  await t.step("predict: a missing bundle", async () => {
    inputFailure(
      await runCli(["predict", "--bundle", `${dir.path}/none`]),
      /Cannot load bundle .*none/,
    );
  });
  await t.step("serve: an audit key file that is not there", async () => {
    inputFailure(
      await runCli([
        "serve",
        "--bundle",
        "demo/bundle",
        "--audit-key-file",
        `${dir.path}/no-key`,
        "--port",
        "0",
      ]),
      /no-key/,
    );
  });
});

Deno.test("the command line exits 1 with the stack when a command meets a bug", async () => {
  await using dir = await tempDir();
  // A broken dependency stands for a bug: the word segmenter gives back
  // nothing to iterate, so featurising a non-ASCII text throws a TypeError.
  const script = `${dir.path}/broken.ts`;
  await Deno.writeTextFile(
    script,
    `const { main } = await import(${JSON.stringify(`${ROOT}main.ts`)});
Intl.Segmenter.prototype.segment = (() => undefined) as never;
Deno.exit(await main(Deno.args));
`,
  );
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--quiet",
      "--config",
      `${ROOT}deno.json`,
      script,
      "predict",
      "--bundle",
      `${ROOT}demo/bundle`,
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode('{"text": "où est ma carte"}\n'));
  await writer.close();
  const out = await child.output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 1, stderr);
  assert.match(
    stderr,
    /^error: an unexpected failure, a bug in decision-tables/,
  );
  assert.match(stderr, /\nTypeError: .*not iterable/);
  assert.match(
    stderr,
    /\n +at .*text\.ts:\d+:\d+/,
    "the stack names the place",
  );
});
