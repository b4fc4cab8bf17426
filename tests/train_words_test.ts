/**
 * What `train` and `inspect` say beside their figures: how a question's
 * kind was decided and which answer broke a yes/no column, what a
 * threshold of 0 means, and what the test part's figures are.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { testInWords } from "../src/cli/report_words.ts";
import { Meter } from "../src/train/meter.ts";
import { parseCsvTraces, parseJsonlTraces } from "../src/traces/mod.ts";
import { yesNoBreak } from "../src/traces/answers.ts";
import { pick, rng, runCli, tempDir } from "./_fixtures.ts";
import { startServer } from "./_http_helpers.ts";

/** `count` JSON Lines traces of a yes/no question `refund` that the table answers without a mistake. */
function easyTraces(count: number, seed: number): string[] {
  const random = rng(seed);
  const yes = ["refund please", "money back now", "reimburse me"];
  const no = ["hello there", "opening hours", "your address"];
  return Array.from({ length: count }, (_, i) => {
    const answer = random() < 0.5;
    const text = `${pick(random, answer ? yes : no)} ${
      pick(random, ["a", "b", "c", "d", "e", "f"])
    }${i}`;
    return JSON.stringify({ text, answers: { refund: answer } });
  });
}

Deno.test("yesNoBreak() names the few answers that keep a yes/no question from being one, and nothing else", () => {
  assert.deepEqual(yesNoBreak(["true", "false", "yes"], [500, 499, 1]), {
    breaking: [2],
    booleans: 999,
  });
  assert.deepEqual(yesNoBreak(["1", "0", "2"], [50, 50, 1]), {
    breaking: [2],
    booleans: 100,
  });
  // Already yes/no, a real choice, or one side of yes/no missing: nothing to name.
  assert.equal(yesNoBreak(["true", "false"], [5, 5]), null);
  assert.equal(yesNoBreak(["true", "false", "maybe"], [5, 5, 5]), null);
  assert.equal(yesNoBreak(["true", "maybe"], [50, 1]), null);
  assert.equal(yesNoBreak(["billing", "returns", "true"], [5, 5, 1]), null);
});

Deno.test("reading traces warns, with file and line, when one answer breaks a yes/no column", async (t) => {
  await t.step("JSON Lines", () => {
    const lines = easyTraces(60, 1);
    lines.splice(
      41,
      0,
      JSON.stringify({ text: "I want a refund", answers: { refund: "yes" } }),
    );
    const warnings: string[] = [];
    const set = parseJsonlTraces("t.jsonl", lines.join("\n"), {
      warn: (w) => warnings.push(w),
    });
    assert.equal(set.questions[0]!.kind, "choice");
    assert.equal(warnings.length, 1);
    assert.match(
      warnings[0]!,
      /^t\.jsonl: question "refund" is read as a choice of 3 options, not yes\/no: its other 60 answers are true or false, but "yes" \(1 answer, first at t\.jsonl:42\) is not; if "yes" means true, write true there/,
    );
    assert.match(
      warnings[0]!,
      /a question is yes\/no only when every answer is true or false$/,
    );
  });
  await t.step("CSV", () => {
    const rows = ["text,refund"];
    for (let i = 0; i < 40; i++) {
      rows.push(`text ${i},${i % 2 ? "true" : "false"}`);
    }
    rows.splice(7, 0, "text x,N/A");
    const warnings: string[] = [];
    parseCsvTraces("t.csv", rows.join("\n"), {
      warn: (w) => warnings.push(w),
    });
    assert.equal(warnings.length, 1);
    assert.match(
      warnings[0]!,
      /"N\/A" \(1 answer, first at t\.csv:8\) is not; if they mean true or false, write true or false there/,
    );
  });
  await t.step("a real third option earns no warning", () => {
    const warnings: string[] = [];
    parseJsonlTraces(
      "t.jsonl",
      Array.from(
        { length: 30 },
        (_, i) =>
          JSON.stringify({
            text: `t${i}`,
            answers: { q: ["true", "false", "unsure"][i % 3] },
          }),
      ).join("\n"),
      { warn: (w) => warnings.push(w) },
    );
    assert.deepEqual(warnings, []);
  });
});

Deno.test("train, inspect and serve say how a question's kind was decided and what a threshold of 0 means", async () => {
  await using dir = await tempDir();
  const traces = join(dir.path, "easy.jsonl");
  await Deno.writeTextFile(traces, easyTraces(1500, 2).join("\n") + "\n");
  const bundle = join(dir.path, "b");
  const trained = await runCli([
    "train",
    "--traces",
    traces,
    "--out",
    bundle,
    "--quiet",
  ]);
  assert.equal(trained.code, 0, trained.stderr);
  assert.match(
    trained.stdout,
    /^refund \(yes\/no: every answer was true or false\): calibrated, threshold 0\.0000;/m,
  );
  const zero =
    /^ {2}threshold 0: every candidate threshold passed the test on calibration, so confidence alone withholds nothing; the other rules still do/m;
  assert.match(trained.stdout, zero);
  assert.match(
    trained.stdout,
    /^ {2}the test part is a small sample \(\d+ certified of \d+ held-out answers\): its 95% interval, 0\.0%-\d+\.\d%, says how far its disagreement may be from the traffic's; the bound \(at most 5% with probability 95%\) is about traffic like the calibration part$/m,
  );
  const inspected = await runCli(["inspect", "--bundle", bundle]);
  assert.equal(inspected.code, 0, inspected.stderr);
  assert.match(inspected.stdout, zero);
  const server = await startServer({ bundle });
  try {
    assert.match(
      server.output().stdout,
      /question refund: yes\/no, certified at any confidence \(alpha 0\.05\): every candidate threshold passed the test on calibration/,
    );
    assert.doesNotMatch(server.output().stdout, /confidence >= 0\.000/);
  } finally {
    await server.stop();
  }
});

Deno.test("train names a choice's kind as not all true or false", async () => {
  await using dir = await tempDir();
  const traces = join(dir.path, "yes.jsonl");
  const lines = easyTraces(400, 3);
  lines[10] = JSON.stringify({ text: "refund me", answers: { refund: "yes" } });
  await Deno.writeTextFile(traces, lines.join("\n") + "\n");
  const r = await runCli([
    "train",
    "--traces",
    traces,
    "--out",
    join(dir.path, "b"),
    "--allow-uncalibrated",
    "--quiet",
  ]);
  assert.match(
    r.stdout,
    /^refund \(a choice of 3 options: its answers are not all true or false\)/m,
  );
  assert.match(
    r.stderr,
    /question "refund" is read as a choice of 3 options, not yes\/no: .*"yes" \(1 answer, first at .*yes\.jsonl:11\)/,
  );
});

/** Test figures of `certified` certified answers out of `n`, `wrong` of them disagreeing. */
function figures(n: number, certified: number, wrong: number) {
  const meter = new Meter();
  for (let i = 0; i < n; i++) meter.add(i < certified, i < wrong);
  return meter.result();
}

Deno.test("testInWords() says a test disagreement above alpha on a few hundred answers is within its interval", () => {
  // 390 test answers, 284 certified, 15 disagreeing: 5.3%, interval about 3-8.6%.
  const t = figures(390, 284, 15);
  const line = testInWords(t, 0.05, 0.05)!;
  assert.match(
    line,
    /^the test part is a small sample \(284 certified of 390 held-out answers\): its 95% interval, 3\.\d%-8\.\d%/,
  );
  assert.match(
    line,
    /; 5\.3% here is above alpha but within what its interval allows, no evidence against the bound$/,
  );
  assert.doesNotMatch(line, /Warning/);
});

Deno.test("testInWords() flags a test disagreement only when the interval's lower end is above alpha", () => {
  // 300 certified, 36 disagreeing: 12%, its interval's lower end about 8.6%.
  const line = testInWords(figures(400, 300, 36), 0.05, 0.05)!;
  assert.match(
    line,
    /Warning: even the interval's lower end is above alpha, so the promise fails on this test part/,
  );
  // Below alpha: no flag, no "above alpha".
  const quiet = testInWords(figures(400, 300, 6), 0.05, 0.05)!;
  assert.doesNotMatch(quiet, /Warning|above alpha/);
  assert.equal(testInWords(figures(10, 0, 0), 0.05, 0.05), null);
});
