import assert from "node:assert/strict";
import { loadBundle } from "../src/bundle/mod.ts";
import { type CliRun, exists, syntheticTraces, toJsonl } from "./_fixtures.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const CONFIG = new URL("../deno.json", import.meta.url).pathname;
const ROOT = new URL("..", import.meta.url).pathname;

interface RunOptions {
  cwd?: string;
  stdin?: Uint8Array | string;
  env?: Record<string, string>;
  /** Permission and V8 flags for `deno run` (default `-A`). */
  flags?: string[];
}

/**
 * Runs `deno ARGS` (the whole command line after `deno`) in a subprocess,
 * without the INIT_CWD this test process may have from an outer `deno task`
 * (`deno task` keeps one that is set).
 */
async function deno(args: string[], o: RunOptions = {}): Promise<CliRun> {
  const inherited = Deno.env.toObject();
  delete inherited.INIT_CWD;
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd: o.cwd ?? ROOT,
    stdin: o.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    clearEnv: true,
    env: { ...inherited, NO_COLOR: "1", ...o.env },
  }).spawn();
  if (o.stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(
      typeof o.stdin === "string" ? new TextEncoder().encode(o.stdin) : o.stdin,
    );
    await w.close();
  }
  const out = await child.output();
  const dec = new TextDecoder();
  return {
    code: out.code,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
  };
}

/** Runs `main.ts ARGS`. */
function cli(args: string[], o: RunOptions = {}): Promise<CliRun> {
  return deno(["run", ...(o.flags ?? ["-A"]), "--quiet", MAIN, ...args], o);
}

function failedInOneLine(run: CliRun): string {
  assert.equal(run.code, 2, `exit code ${run.code}; stderr ${run.stderr}`);
  const lines = run.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, `stderr: ${run.stderr}`);
  return lines[0]!;
}

const work = Deno.makeTempDirSync({ prefix: "dtable-cli-input-" });
globalThis.addEventListener(
  "unload",
  () => Deno.removeSync(work, { recursive: true }),
);
const TRAIN = syntheticTraces({ count: 1200, seed: 11, noise: 0.005 });
const TRAIN_FILE = `${work}/train.jsonl`;
Deno.writeTextFileSync(TRAIN_FILE, toJsonl(TRAIN));
const BUNDLE = `${work}/bundle`;

let trained: Promise<CliRun> | undefined;
function bundle(): Promise<CliRun> {
  trained ??= cli([
    "train",
    "--traces",
    TRAIN_FILE,
    "--out",
    BUNDLE,
    "--quiet",
    "--max-epochs",
    "2",
  ]).then((run) => {
    assert.equal(run.code, 0, run.stderr);
    return run;
  });
  return trained;
}

/** `eval --json` figures of the shared bundle on `traces` (more flags in `extra`). */
async function evalJson(extra: string[], o: RunOptions = {}) {
  await bundle();
  const run = await cli(["eval", "--bundle", BUNDLE, "--json", ...extra], o);
  assert.equal(run.code, 0, run.stderr);
  return { json: JSON.parse(run.stdout), stderr: run.stderr };
}

const EVAL = syntheticTraces({ count: 300, seed: 12 });
const EVAL_URGENT = EVAL.filter((t) => t.answers.urgent !== undefined).length;

Deno.test("eval reads every --traces given, in order, as one set", async () => {
  const a = `${work}/a.jsonl`, b = `${work}/b.jsonl`;
  await Deno.writeTextFile(a, toJsonl(EVAL.slice(0, 100)));
  await Deno.writeTextFile(b, toJsonl(EVAL.slice(100)));
  const both = await evalJson(["--traces", a, "--traces", b]);
  assert.equal(both.json.questions.topic.n, 300);
  const whole = `${work}/whole.jsonl`;
  await Deno.writeTextFile(whole, toJsonl(EVAL));
  assert.deepEqual(both.json, (await evalJson(["--traces", whole])).json);
  // In text form too, quietly.
  const text = await cli([
    "eval",
    "--bundle",
    BUNDLE,
    "--traces",
    a,
    "--traces",
    b,
    "--quiet",
  ]);
  assert.equal(text.code, 0, text.stderr);
  assert.equal(text.stderr, "");
  assert.match(text.stdout, /^topic: 300 answers/m);
});

Deno.test("eval reads standard input with --traces -", async () => {
  const { json } = await evalJson(["--traces", "-"], { stdin: toJsonl(EVAL) });
  assert.equal(json.questions.topic.n, 300);
  assert.equal(json.questions.urgent.n, EVAL_URGENT);
  // Sniffed as CSV when it starts like a header.
  const csv = "text,topic\n" +
    EVAL.map((t) => `${t.text},${t.answers.topic}`).join("\n");
  const fromCsv = await evalJson(["--traces", "-"], { stdin: csv });
  assert.equal(fromCsv.json.questions.topic.n, 300);
});

Deno.test("eval reads TSV, a JSON array and gzip files", async () => {
  const tsv = `${work}/e.tsv`,
    array = `${work}/e.json`,
    gz = `${work}/e.jsonl.gz`;
  await Deno.writeTextFile(
    tsv,
    "text\ttopic\turgent\n" +
      EVAL.map((t) =>
        `${t.text}\t${t.answers.topic}\t${
          t.answers.urgent === undefined ? "" : String(t.answers.urgent)
        }`
      ).join("\n"),
  );
  await Deno.writeTextFile(array, JSON.stringify(EVAL, null, 2));
  const gzipped = new Blob([toJsonl(EVAL)]).stream().pipeThrough(
    new CompressionStream("gzip"),
  );
  await Deno.writeFile(gz, gzipped);
  for (const file of [tsv, array, gz]) {
    const { json } = await evalJson(["--traces", file]);
    assert.equal(json.questions.topic.n, 300, file);
    assert.equal(json.questions.urgent.n, EVAL_URGENT, file);
  }
});

Deno.test("eval reads the columns --text-column and --answer-columns name", async () => {
  const file = `${work}/named.csv`;
  await Deno.writeTextFile(
    file,
    "id,message,topic,reviewer\n" +
      EVAL.map((t, i) => `${i},${t.text},${t.answers.topic},bob`).join("\n"),
  );
  const { json, stderr } = await evalJson([
    "--traces",
    file,
    "--text-column",
    "message",
    "--answer-columns",
    "topic",
  ]);
  assert.deepEqual(Object.keys(json.questions), ["topic"]);
  assert.equal(json.questions.topic.n, 300);
  assert.equal(stderr, "", "no note: id and reviewer were not asked for");
  // Without the flags, the file has no text column.
  const run = await cli(["eval", "--bundle", BUNDLE, "--traces", file]);
  assert.match(
    failedInOneLine(run),
    /named\.csv:1: the header has no "text" column \(columns: "id", "message", "topic", "reviewer"\); name the column that holds the text with --text-column NAME$/,
  );
});

Deno.test("eval with traces that answer none of the bundle's questions exits 2", async () => {
  await bundle();
  const file = `${work}/other.jsonl`;
  await Deno.writeTextFile(
    file,
    toJsonl([{ text: "hello", answers: { mood: "happy" } }]),
  );
  const run = await cli(["eval", "--bundle", BUNDLE, "--traces", file]);
  assert.equal(
    failedInOneLine(run),
    `error: nothing to evaluate: the traces answer none of the bundle's questions (bundle: topic, urgent; traces: mood)`,
  );
  assert.equal(run.stdout, "");
});

Deno.test("train reads a pandas CSV: the index column is noted and ignored, True/False makes a yes/no question", async () => {
  const file = `${work}/pandas.csv`;
  await Deno.writeTextFile(
    file,
    ",text,topic,urgent\n" +
      TRAIN.map((t, i) =>
        `${i},${t.text},${t.answers.topic},${
          t.answers.urgent === undefined
            ? ""
            : t.answers.urgent
            ? "True"
            : "False"
        }`
      ).join("\n") + "\n",
  );
  const out = `${work}/pandas-bundle`;
  const run = await cli([
    "train",
    "--traces",
    file,
    "--out",
    out,
    "--quiet",
    "--max-epochs",
    "2",
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(
    run.stderr,
    `note: ${file}: column 1 has no name: ignored (an index column, as pandas writes)\n`,
  );
  const table = await loadBundle(out);
  assert.deepEqual(
    table.questions.map((q) => [q.name, q.kind]),
    [["topic", "choice"], ["urgent", "yes_no"]],
  );
});

Deno.test("deno task resolves relative paths from the folder the user typed them in", async () => {
  await bundle();
  const user = await Deno.makeTempDir({ dir: work, prefix: "user-" });
  await Deno.writeTextFile(`${user}/mine.jsonl`, toJsonl(EVAL));
  // The tasks run main.ts from the project folder; INIT_CWD says where the user is.
  const train = await deno([
    "task",
    "--quiet",
    "--config",
    CONFIG,
    "train",
    "--traces",
    "mine.jsonl",
    "--traces",
    "../train.jsonl",
    "--out",
    "my-bundle",
    "--quiet",
    "--max-epochs",
    "1",
  ], { cwd: user });
  assert.equal(train.code, 0, train.stderr);
  assert.ok(await exists(`${user}/my-bundle/manifest.json`));
  assert.equal(await exists(`${ROOT}/my-bundle`), false);
  const evaluated = await deno([
    "task",
    "--quiet",
    "--config",
    CONFIG,
    "eval",
    "--bundle",
    "../bundle",
    "--traces",
    "mine.jsonl",
    "--json",
  ], { cwd: user });
  assert.equal(evaluated.code, 0, evaluated.stderr);
  assert.equal(JSON.parse(evaluated.stdout).questions.topic.n, 300);
  const inspected = await deno(
    ["task", "--quiet", "--config", CONFIG, "inspect", "--bundle", "my-bundle"],
    { cwd: user },
  );
  assert.equal(inspected.code, 0, inspected.stderr);
  assert.match(inspected.stdout, new RegExp(`^bundle ${user}/my-bundle: `));
  // Errors name the path resolved.
  const missing = await deno(
    [
      "task",
      "--quiet",
      "--config",
      CONFIG,
      "eval",
      "--bundle",
      "../bundle",
      "--traces",
      "nope.jsonl",
    ],
    { cwd: user },
  );
  assert.equal(
    failedInOneLine(missing),
    `error: Cannot read traces ${user}/nope.jsonl: no such file`,
  );
});

Deno.test("without permission to read INIT_CWD, relative paths are the working folder's", async () => {
  await bundle();
  const run = await cli(
    ["eval", "--bundle", "bundle", "--traces", "train.jsonl", "--json"],
    {
      cwd: work,
      env: { INIT_CWD: "/nonexistent" },
      flags: ["--allow-read"],
    },
  );
  assert.equal(run.code, 0, run.stderr);
  assert.equal(JSON.parse(run.stdout).questions.topic.n, 1200);
});

Deno.test("train stops with the line it reached, before traces outgrow the memory V8 allows", async () => {
  // Distinct texts on stdin until train stops reading; V8 limited to a 48 MB old generation.
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--quiet",
      "--v8-flags=--max-old-space-size=48",
      MAIN,
      "train",
      "--traces",
      "-",
      "--out",
      `${work}/never`,
      "--quiet",
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const encoder = new TextEncoder();
  let sent = 0;
  try {
    for (let round = 0; round < 100; round++) {
      const lines: string[] = [];
      for (let j = 0; j < 5000; j++, sent++) {
        lines.push(
          `{"text": "message ${sent} ${
            "abcdefghij".repeat(4)
          }", "answers": {"q": "${sent % 5}"}}`,
        );
      }
      await writer.write(encoder.encode(lines.join("\n") + "\n"));
    }
    await writer.close();
  } catch {
    // The reader stopped and closed its end.
  }
  const out = await child.output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 2, stderr);
  assert.match(
    stderr,
    /^error: stdin: stopped at line (\d+): the \d+ distinct texts read so far take about \d+ MB, more than 50% of the 48 MB this process may use \(training needs the rest\); split the traces into smaller files, or give the process more memory: deno run --v8-flags=--max-old-space-size=96 \(MB\) \.\.\.\n$/,
  );
  const line = Number(/line (\d+)/.exec(stderr)![1]);
  assert.ok(line > 10_000 && line < sent, `line ${line} of ${sent} sent`);
  assert.equal(await exists(`${work}/never`), false);
});
