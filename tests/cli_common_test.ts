import assert from "node:assert/strict";
import {
  driftFlagSettings,
  oneLine,
  parseFlags,
  permissionHint,
  UsageError,
  userPath,
} from "../src/cli/common.ts";
import { ProgressPrinter } from "../src/cli/progress.ts";
import { RemainingTime } from "../src/train/embed.ts";
import { SERVE_USAGE } from "../src/cli/serve.ts";
import { parseServeFlags } from "../src/cli/serve_flags.ts";
import { ROUTE_TABLE } from "../src/http/routes.ts";
import { readTraceFlags } from "../src/cli/trace_input.ts";
import { tempDir, throwsWith } from "./_fixtures.ts";

const FLAGS = {
  alpha: { type: "string" },
  traces: { type: "string", multiple: true },
  quiet: { type: "boolean", default: false },
} as const;

Deno.test("parseFlags() takes a negative number after its flag, for the flag's own check to judge", () => {
  const { values } = parseFlags("train", ["--alpha", "-0.1", "--quiet"], FLAGS);
  assert.equal(values.alpha, "-0.1");
  assert.equal(values.quiet, true);
  assert.equal(
    parseFlags("train", ["--alpha", "-.5"], FLAGS).values.alpha,
    "-.5",
  );
  assert.equal(
    parseFlags("train", ["--alpha", "-3e2"], FLAGS).values.alpha,
    "-3e2",
  );
  // "-" alone is a value (standard input), and a flag is still a flag.
  assert.deepEqual(
    parseFlags("train", ["--traces", "-", "--traces", "b"], FLAGS).values
      .traces,
    ["-", "b"],
  );
});

Deno.test("parseFlags() reports every flag mistake in one line, with what to do", () => {
  const cases: [string[], RegExp][] = [
    [
      ["--alpha", "-x"],
      /^--alpha needs a value; to give one that starts with "-", write --alpha=-VALUE$/,
    ],
    [["--alpha"], /^--alpha needs a value \(see train --help\)$/],
    [["--quiet=yes"], /^--quiet takes no value \(see train --help\)$/],
    [["--bogus"], /^unknown flag --bogus \(see train --help\)$/],
    [["-q"], /^unknown flag -q \(see train --help\)$/],
    [
      ["traces.jsonl"],
      /^unexpected argument "traces\.jsonl": every value follows its flag \(see train --help\)$/,
    ],
  ];
  for (const [args, pattern] of cases) {
    throwsWith(() => parseFlags("train", args, FLAGS), UsageError, pattern);
  }
});

Deno.test("oneLine() keeps every line of a message, joined", () => {
  assert.equal(
    oneLine(new Error("first\n  second\nthird\n")),
    "first second third",
  );
  assert.equal(oneLine("plain"), "plain");
});

Deno.test("userPath() resolves a relative path from INIT_CWD, keeping -, absolute paths and undefined", () => {
  const before = Deno.env.get("INIT_CWD");
  try {
    Deno.env.set("INIT_CWD", "/home/someone/work");
    assert.equal(userPath("logs/a.jsonl"), "/home/someone/work/logs/a.jsonl");
    assert.equal(userPath("../b.csv"), "/home/someone/b.csv");
    assert.equal(userPath("/abs/c.csv"), "/abs/c.csv");
    assert.equal(userPath("-"), "-");
    assert.equal(userPath(undefined), undefined);
    Deno.env.delete("INIT_CWD");
    assert.equal(userPath("logs/a.jsonl"), "logs/a.jsonl");
  } finally {
    if (before === undefined) Deno.env.delete("INIT_CWD");
    else Deno.env.set("INIT_CWD", before);
  }
});

Deno.test("serve takes --bundle and --token-file from INIT_CWD too", () => {
  const before = Deno.env.get("INIT_CWD");
  try {
    Deno.env.set("INIT_CWD", "/home/someone");
    const s = parseServeFlags(["--bundle", "b", "--token-file", "secret/t"])!;
    assert.equal(s.bundle, "/home/someone/b");
    assert.equal(s.tokenFile, "/home/someone/secret/t");
    assert.equal(parseServeFlags(["--bundle", "b"])!.tokenFile, undefined);
  } finally {
    if (before === undefined) Deno.env.delete("INIT_CWD");
    else Deno.env.set("INIT_CWD", before);
  }
});

Deno.test("driftFlagSettings() checks each --drift-* flag by one rule and one wording, for serve as for train", () => {
  assert.deepEqual(driftFlagSettings({}), {});
  assert.deepEqual(
    driftFlagSettings({
      "drift-delta": "0.02",
      "drift-window": "50",
      "drift-scope-p": "0",
    }),
    { delta: 0.02, rearm_window: 50, scope_p: 0 },
  );
  const wrong: [string, string, string][] = [
    ["drift-delta", "1", "in (0, 1)"],
    ["drift-window", "1.5", "a positive integer"],
    ["drift-single-p", "1", "in [0, 1)"],
    ["drift-max-novelty", "2", "in [0, 1]"],
    ["drift-min-novelty", "-1", "in [0, 1]"],
    ["drift-scope-p", "1", "in [0, 1)"],
  ];
  for (const [flag, value, words] of wrong) {
    const message = `--${flag} must be ${words}: got "${value}"`;
    const exactly = new RegExp(`^${RegExp.escape(message)}$`);
    throwsWith(
      () => driftFlagSettings({ [flag]: value }),
      UsageError,
      exactly,
    );
    throwsWith(
      () => parseServeFlags(["--bundle", "b", `--${flag}=${value}`]),
      UsageError,
      exactly,
    );
  }
});

Deno.test("serve --help lists every route of the route table, once each, marking the one that needs no token", () => {
  const lines = SERVE_USAGE.split("\n");
  for (const route of ROUTE_TABLE) {
    const line = lines.filter((l) =>
      l.startsWith(`  ${route.method.padEnd(4)} ${route.path} `)
    );
    assert.equal(line.length, 1, `${route.method} ${route.path}`);
    assert.ok(line[0]!.includes(route.usage));
    assert.equal(line[0]!.endsWith("(no token needed)"), !route.guarded);
    assert.ok(line[0]!.length <= 80, line[0]);
  }
});

/** A printer writing to a string, on a clock the test moves. */
function fakePrinter(quiet: boolean, terminal: boolean) {
  let now = 0;
  let out = "";
  const printer = new ProgressPrinter({
    quiet,
    terminal,
    now: () => now,
    write: (text) => (out += text),
  });
  return {
    printer,
    at(ms: number) {
      now = ms;
    },
    out: () => out,
  };
}

Deno.test("ProgressMeter says nothing for a second, then lines, rate, bytes of the total and time left", () => {
  const p = fakePrinter(false, false);
  const meter = p.printer.meter("reading");
  p.at(900);
  meter.update(90_000, 9 * 1024 * 1024, 90 * 1024 * 1024);
  assert.equal(p.out(), "", "silent in its first second");
  p.at(2000);
  meter.update(200_000, 20 * 1024 * 1024, 80 * 1024 * 1024);
  assert.equal(
    p.out(),
    "[  2.0s] reading: 200,000 lines, 100,000 lines/s, 20.0 of 80.0 MB, about 6 s left\n",
  );
  // Not on a terminal: the next line comes ten seconds later.
  p.at(5000);
  meter.update(500_000, 50 * 1024 * 1024, 80 * 1024 * 1024);
  assert.equal(p.out().split("\n").length, 2);
  p.at(12_000);
  meter.update(1_200_000, 60 * 1024 * 1024, null);
  assert.match(
    p.out(),
    /\[ 12\.0s\] reading: 1,200,000 lines, 100,000 lines\/s, 60\.0 MB\n$/,
  );
  p.at(200_000);
  meter.update(1_300_000, 40 * 1024 * 1024, 80 * 1024 * 1024);
  assert.match(p.out(), /40\.0 of 80\.0 MB, about 3 min left\n$/);
  meter.done("read 1,300,000 lines");
  assert.match(
    p.out(),
    /\[200\.0s\] read 1,300,000 lines in 200\.0 s \(6,500 lines\/s\)\n$/,
  );
});

Deno.test("ProgressMeter rewrites one line in place on a terminal, closed by the next line", () => {
  const p = fakePrinter(false, true);
  const meter = p.printer.meter("reading");
  p.at(1000);
  meter.update(10, 0, null);
  p.at(1500);
  meter.update(15, 0, null);
  p.at(2000);
  meter.update(20, 0, null);
  assert.equal(
    p.out(),
    "\r\x1b[K[  1.0s] reading: 10 lines, 10 lines/s" +
      "\r\x1b[K[  2.0s] reading: 20 lines, 10 lines/s",
  );
  p.printer.line("featurising 20 texts");
  assert.ok(
    p.out().endsWith(
      "10 lines/s\r\x1b[K[  2.0s] featurising 20 texts\n",
    ),
    JSON.stringify(p.out()),
  );
});

Deno.test("ProgressPrinter under --quiet prints no progress, but warnings and notes", () => {
  const p = fakePrinter(true, false);
  const meter = p.printer.meter("reading");
  p.at(5000);
  meter.update(10, 0, null);
  meter.done("read 10 lines");
  p.printer.line("featurising");
  assert.equal(p.out(), "");
  p.printer.warn("refused question");
  p.printer.note("column 1 has no name");
  assert.equal(
    p.out(),
    "warning: refused question\nnote: column 1 has no name\n",
  );
  // A meter that took less than a second leaves no summary.
  const q = fakePrinter(false, false);
  q.printer.meter("reading").done("read 3 lines");
  assert.equal(q.out(), "");
});

Deno.test("readTraceFlags() shows a reading meter on a long read, and notes", async () => {
  await using dir = await tempDir();
  const file = `${dir.path}/t.csv`;
  await Deno.writeTextFile(
    file,
    ",text,q\n" +
      Array.from({ length: 5000 }, (_, i) => `${i},text ${i % 100},${i % 2}`)
        .join("\n"),
  );
  let now = 0;
  let out = "";
  const printer = new ProgressPrinter({
    now: () => (now += 700),
    write: (text) => (out += text),
    terminal: false,
  });
  const set = await readTraceFlags("train", { traces: [file] }, printer);
  assert.equal(set.texts.length, 5000);
  assert.match(out, /^note: .*t\.csv: column 1 has no name: ignored/m);
  assert.match(
    out,
    /\] reading: [\d,]+ lines, [\d,]+ lines\/s, [\d.]+ of [\d.]+ MB/,
  );
  assert.match(
    out,
    /\] read 5,001 lines, 5,000 traces, 100 distinct texts in [\d.]+ s/,
  );
});

Deno.test("permissionHint() turns Deno's missing-permission words into the flag to add, with its value", () => {
  assert.equal(
    permissionHint(
      'Cannot read traces t.jsonl: Requires read access to "t.jsonl", run again with the --allow-read flag',
    ),
    'Cannot read traces t.jsonl: no read access to "t.jsonl"; allow it with --allow-read=t.jsonl',
  );
  // A scratch name a run makes beside its destination: the folder is what to allow.
  assert.equal(
    permissionHint(
      'Requires write access to "/srv/b.tmp-5284bb1c", run again with the --allow-write flag',
    ),
    'no write access to "/srv/b.tmp-5284bb1c"; allow it with --allow-write=/srv',
  );
  assert.equal(permissionHint("no such file"), "no such file");
});

Deno.test("a command without read access to its bundle or traces says which --allow-read to add", async () => {
  const main = new URL("../main.ts", import.meta.url).pathname;
  const root = new URL("..", import.meta.url).pathname;
  const run = async (args: string[], allow: string[]) => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", ...allow, main, ...args],
      cwd: root,
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
  };
  const bundle = await run(
    ["eval", "--bundle", "demo/bundle", "--traces", "demo/traces.jsonl"],
    [],
  );
  assert.equal(bundle.code, 2);
  assert.equal(
    bundle.stderr.trim(),
    'error: Cannot load bundle demo/bundle: no read access to "demo/bundle"; allow it with --allow-read=demo/bundle',
  );
  const traces = await run(
    ["eval", "--bundle", "demo/bundle", "--traces", "demo/traces.jsonl"],
    ["--allow-read=demo/bundle"],
  );
  assert.equal(traces.code, 2);
  assert.match(
    traces.stderr,
    /^error: Cannot read traces demo\/traces\.jsonl: no read access to "demo\/traces\.jsonl"; allow it with --allow-read=demo\/traces\.jsonl$/m,
  );
});

Deno.test("serve --semantic-workers takes 0 (the table alone) to 64, one worker by default", () => {
  assert.equal(parseServeFlags(["--bundle", "b"])!.semantic.workers, 1);
  assert.equal(
    parseServeFlags(["--bundle", "b", "--semantic-workers", "0"])!.semantic
      .workers,
    0,
  );
  throwsWith(
    () => parseServeFlags(["--bundle", "b", "--semantic-workers", "-1"]),
    UsageError,
    /^--semantic-workers must be an integer from 0 to 64 \(0: the table alone\): got "-1"$/,
  );
});

Deno.test("RemainingTime estimates from the pace measured after the first batch, not from a slow start", () => {
  // 3,000 texts: 10 s to load the encoder, then 32 texts each 0.3 s
  // (about 28 s of embedding). Counted from the start, the first estimate
  // would be about 950 s.
  const eta = new RemainingTime();
  const at = (batch: number) => 10_000 + batch * 300;
  assert.equal(eta.seconds(32, 3000, at(1)), null);
  const first = eta.seconds(64, 3000, at(2))!;
  const truth = ((3000 - 64) / 32) * 0.3;
  assert.ok(Math.abs(first - truth) < 0.5, `${first} s against ${truth} s`);
  const later = eta.seconds(1600, 3000, at(50))!;
  assert.ok(Math.abs(later - ((3000 - 1600) / 32) * 0.3) < 0.5);
});
