import assert from "node:assert/strict";
import { loadBundle } from "../src/bundle/files.ts";
import { assess } from "../src/engine/answer.ts";
import { prepareText } from "../src/engine/prepare.ts";
import { QUIET_GUARD } from "../src/engine/drift.ts";
import { clopperPearson } from "../src/guarantee/distributions.ts";
import { AUTO_MIN_GROUPS } from "../src/train/split.ts";
import { readTraces } from "../src/traces/mod.ts";
import {
  type CliRun,
  exists,
  pick,
  rng,
  runCli,
  stateOf,
  syntheticTraces,
  toJsonl,
} from "./_fixtures.ts";

// One bundle trained through the command line, shared by the tests of this file.
const work = Deno.makeTempDirSync({ prefix: "dtable-cli-" });
globalThis.addEventListener(
  "unload",
  () => Deno.removeSync(work, { recursive: true }),
);
const TRAIN_FILE = `${work}/train.jsonl`;
const BUNDLE = `${work}/bundle`;
Deno.writeTextFileSync(
  TRAIN_FILE,
  toJsonl(syntheticTraces({ count: 2000, seed: 7, noise: 0.005, coin: true })),
);

let trained: CliRun | undefined;
async function trainedBundle(): Promise<CliRun> {
  trained ??= await runCli([
    "train",
    "--traces",
    TRAIN_FILE,
    "--out",
    BUNDLE,
    "--seed",
    "3",
    "--allow-uncalibrated",
    "--semantic",
    "off",
    "--quiet",
  ]);
  assert.equal(trained.code, 0, trained.stderr);
  return trained;
}

/** Asserts a run failed with exit code 2 and exactly one line on stderr, and returns that line. */
function failedInOneLine(run: CliRun): string {
  assert.equal(run.code, 2, `exit code ${run.code}; stderr ${run.stderr}`);
  const lines = run.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, `stderr: ${run.stderr}`);
  return lines[0]!;
}

/** Runs `eval --json` (plus `extra` flags) on the trained bundle; checks exit 0 and parses stdout. */
async function evalJson(file: string, ...extra: string[]) {
  const run = await runCli([
    "eval",
    "--bundle",
    BUNDLE,
    "--traces",
    file,
    "--json",
    ...extra,
  ]);
  assert.equal(run.code, 0, run.stderr);
  return JSON.parse(run.stdout);
}

Deno.test("train writes a complete bundle and prints each question's figures", async () => {
  const run = await trainedBundle();
  // --quiet prints no progress; warnings stay, such as why coin is uncalibrated.
  const lines = run.stderr.trimEnd().split("\n");
  assert.ok(lines.every((l) => l.startsWith("warning: ")), run.stderr);
  assert.match(
    run.stderr,
    /question "coin" is uncalibrated .*: even its \d+ most confident/,
  );
  for (const q of ["topic", "urgent", "coin"]) {
    assert.match(run.stdout, new RegExp(`^${q} \\((yes/no|a choice)`, "m"));
  }
  assert.match(
    run.stdout,
    /^coin \(yes\/no: every answer was true or false\): uncalibrated/m,
  );
  // Random answers: even the most confident disagree, whatever the size.
  assert.match(run.stdout, /what would help: coin: cleaner labels/);
  const table = await loadBundle(BUNDLE);
  assert.deepEqual(table.questions.map((q) => q.name), [
    "topic",
    "urgent",
    "coin",
  ]);
  assert.equal(table.byName.get("topic")!.calibration.status, "calibrated");
});

const EVAL_FIELDS = [
  "n",
  "certified",
  "coverage",
  "disagreements",
  "disagreement",
  "disagreement_upper",
  "accuracy",
];

Deno.test("eval --json prints exactly the documented figures, matching a recount", async () => {
  await trainedBundle();
  const traces = syntheticTraces({
    count: 400,
    seed: 8,
    noise: 0.02,
    coin: true,
  });
  // Three traces answer with an option the bundle never learned.
  for (const i of [5, 50, 150]) traces[i]!.answers.topic = "teleport";
  const file = `${work}/eval.jsonl`;
  await Deno.writeTextFile(file, toJsonl(traces));
  const out = await evalJson(file);
  assert.deepEqual(Object.keys(out), ["questions"]);
  assert.deepEqual(Object.keys(out.questions).sort(), [
    "coin",
    "topic",
    "urgent",
  ]);

  // Recount with the engine, as serving would answer.
  const table = await loadBundle(BUNDLE);
  const set = await readTraces([file]);
  for (const qa of set.questions) {
    const f = out.questions[qa.name];
    for (const key of EVAL_FIELDS) {
      assert.ok(key in f, `${qa.name} lacks ${key}`);
    }
    let n = 0, certified = 0, disagreements = 0, right = 0;
    set.texts.forEach((text, i) => {
      const label = qa.labels[i]!;
      if (label < 0) return;
      const a = assess(
        table,
        stateOf(table),
        prepareText(table, stateOf(table), text),
        qa.name,
        {},
        QUIET_GUARD,
      )
        .answer;
      const given = a.choice ?? String(a.answer);
      const agrees = given === qa.options[label];
      n++;
      if (agrees) right++;
      if (a.certified) {
        certified++;
        if (!agrees) disagreements++;
      }
    });
    assert.equal(f.n, n, qa.name);
    assert.equal(f.certified, certified, qa.name);
    assert.equal(f.disagreements, disagreements, qa.name);
    assert.equal(f.coverage, certified / n);
    assert.equal(
      f.disagreement,
      certified === 0 ? null : disagreements / certified,
    );
    assert.equal(
      f.disagreement_upper,
      clopperPearson(disagreements, certified).upper,
    );
    assert.equal(f.accuracy, right / n);
  }
  // The urgent question is answered by a share of the traces only.
  assert.ok(out.questions.urgent.n < 400 && out.questions.urgent.n > 250);
  // The random coin is never certified: disagreement is undefined, reported as null.
  assert.equal(out.questions.coin.certified, 0);
  assert.equal(out.questions.coin.disagreement, null);
  assert.equal(out.questions.coin.disagreement_upper, null);
  // Answers naming an unlearned option are counted and reported, not an error.
  assert.equal(out.questions.topic.unlearned_answers, 3);
  assert.ok(out.questions.topic.accuracy < 1);
});

Deno.test("eval counts a certified answer against an unlearned option as a disagreement", async () => {
  await trainedBundle();
  const file = `${work}/unlearned.jsonl`;
  // Clear texts, certified, all answered with an option the bundle never learned.
  const lines = [
    "i need my parcel",
    "my refund please",
    "password locked login",
    "invoice charged fee",
  ]
    .map((text) => ({ text, answers: { topic: "teleport" } }));
  lines.push({ text: "my parcel delivery", answers: { topic: "shipping" } });
  await Deno.writeTextFile(file, toJsonl(lines));
  const json = await evalJson(file);
  const f = json.questions.topic;
  assert.equal(f.n, 5);
  assert.equal(f.unlearned_answers, 4);
  assert.ok(f.certified >= 4, JSON.stringify(f));
  assert.ok(f.disagreements >= 3, JSON.stringify(f));
  assert.equal(f.accuracy, 0.2);
  // The text form says so too.
  const text = await runCli(["eval", "--bundle", BUNDLE, "--traces", file]);
  assert.equal(text.code, 0);
  assert.match(text.stdout, /4 answers name options the bundle never learned/);
});

Deno.test({
  name: "eval accepts traces that all give the same answer to a question",
  async fn() {
    await trainedBundle();
    const file = `${work}/one-class.jsonl`;
    await Deno.writeTextFile(
      file,
      toJsonl([
        { text: "i need my parcel", answers: { topic: "shipping" } },
        { text: "courier tracking", answers: { topic: "shipping" } },
      ]),
    );
    const json = await evalJson(file);
    assert.equal(json.questions.topic.n, 2);
  },
});

Deno.test("eval --stream reports when the drift alarm was raised and cleared", async () => {
  await trainedBundle();
  const random = rng(31);
  const normal = (count: number, seed: number) =>
    syntheticTraces({ count, seed, urgentShare: 0 });
  const foreign = Array.from({ length: 300 }, () => ({
    text: Array.from(
      { length: 5 },
      () =>
        Array.from({ length: 6 }, () => pick(random, [..."qwxzjkvbpy"])).join(
          "",
        ),
    ).join(" "),
    answers: { topic: "billing" },
  }));
  const file = `${work}/stream.jsonl`;
  await Deno.writeTextFile(
    file,
    toJsonl([...normal(300, 41), ...foreign, ...normal(600, 42)]),
  );
  const out = await evalJson(file, "--stream");
  assert.deepEqual(Object.keys(out), ["questions", "stream"]);
  const ev = out.stream.topic;
  assert.ok(Array.isArray(ev.raised) && Array.isArray(ev.cleared));
  console.log(
    `eval --stream, topic: raised at ${JSON.stringify(ev.raised)}, cleared at ${
      JSON.stringify(ev.cleared)
    }`,
  );
  assert.ok(ev.raised.length >= 1, "the foreign block raises the alarm");
  assert.ok(
    ev.raised[0] > 300 && ev.raised[0] <= 600,
    `raised at ${ev.raised[0]}`,
  );
  assert.ok(
    ev.cleared.length >= 1 && ev.cleared[0] > ev.raised[0],
    "normal traffic clears it",
  );
  assert.ok(ev.cleared[ev.cleared.length - 1] <= 1200);
  // While the alarm stood, answers were not certified: coverage drops below the plain eval's.
  const plain = JSON.parse(
    (await runCli(["eval", "--bundle", BUNDLE, "--traces", file, "--json"]))
      .stdout,
  );
  assert.ok(out.questions.topic.certified < plain.questions.topic.certified);
});

Deno.test("inspect prints questions, options and thresholds", async () => {
  await trainedBundle();
  const table = await loadBundle(BUNDLE);
  const run = await runCli(["inspect", "--bundle", BUNDLE]);
  assert.equal(run.code, 0, run.stderr);
  for (const q of table.questions) {
    const line = run.stdout.split("\n").find((l) =>
      l.startsWith(`- ${q.name} `)
    );
    assert.ok(line !== undefined, `no line for ${q.name}:\n${run.stdout}`);
    const t = q.calibration.threshold;
    assert.ok(
      line.includes(
        t === null ? "threshold none" : `threshold ${t.toFixed(4)}`,
      ),
      line,
    );
  }
  const json = await runCli(["inspect", "--bundle", BUNDLE, "--json"]);
  assert.equal(json.code, 0);
  const d = JSON.parse(json.stdout);
  assert.deepEqual(
    d.questions.map((
      q: {
        name: string;
        options: string[];
        calibration: { threshold: number | null };
      },
    ) => [q.name, q.options, q.calibration.threshold]),
    table.questions.map((q) => [q.name, q.options, q.calibration.threshold]),
  );
  // The split, the leakage check and, for the uncalibrated coin, advice.
  assert.match(
    run.stdout,
    /^split: random, texts with TF-IDF cosine >= 0\.8 kept together/m,
  );
  assert.match(
    run.stdout,
    /leakage check: [\d.]+% of calibration answers have a near-twin/,
  );
  assert.match(
    run.stdout,
    /what would help: even its \d+ most confident calibration answers/,
  );
  assert.equal(d.split.mode, "random");
  assert.equal(d.questions[0].leakage.similarity, 0.8);
});

Deno.test("train --split follows where traces come from, and refuses a mode they cannot follow", async () => {
  // Every trace has a group, but 40 are too few for auto: it splits at random
  // and says why; --split group and --split random override it.
  const traces = syntheticTraces({ count: 900, seed: 4, noise: 0.01 }).map((
    t,
    i,
  ) => ({
    ...t,
    group: `user-${i % 40}`,
  }));
  const file = `${work}/grouped.jsonl`;
  await Deno.writeTextFile(file, toJsonl(traces));
  const out = `${work}/grouped-bundle`;
  let run = await runCli([
    "train",
    "--traces",
    file,
    "--out",
    out,
    "--quiet",
    "--allow-uncalibrated",
    "--semantic",
    "off",
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(
    run.stdout,
    /^split: random, .*every trace has a group, but 40 groups .* too few/m,
  );
  run = await runCli([
    "train",
    "--traces",
    file,
    "--out",
    out,
    "--quiet",
    "--allow-uncalibrated",
    "--semantic",
    "off",
    "--split",
    "group",
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(
    run.stdout,
    /^split: group, no group in two parts \(asked for \(--split group\)\): .*calibration \d+ traces in \d+ groups/m,
  );
  run = await runCli([
    "train",
    "--traces",
    file,
    "--out",
    out,
    "--quiet",
    "--allow-uncalibrated",
    "--semantic",
    "off",
    "--split",
    "random",
    "--similarity",
    "1",
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(
    run.stdout,
    /^split: random, equal texts kept together \(asked for/m,
  );
  assert.match(
    failedInOneLine(
      await runCli([
        "train",
        "--traces",
        file,
        "--out",
        out,
        "--split",
        "time",
      ]),
    ),
    /--split time needs a time on every trace: 900 of 900 traces have none/,
  );
  assert.match(
    failedInOneLine(
      await runCli([
        "train",
        "--traces",
        file,
        "--out",
        out,
        "--split",
        "weekly",
      ]),
    ),
    /--split must be one of auto, time, group, random: got "weekly"/,
  );
  assert.match(
    failedInOneLine(
      await runCli([
        "train",
        "--traces",
        file,
        "--out",
        out,
        "--similarity",
        "0",
      ]),
    ),
    /--similarity must be in \(0, 1\]: got "0"/,
  );
});

Deno.test("train stores --serve-new-options, --force-threshold and --min-radius in the bundle", async () => {
  const out = `${work}/settings-bundle`;
  const run = await runCli([
    "train",
    "--traces",
    TRAIN_FILE,
    "--out",
    out,
    "--quiet",
    "--allow-uncalibrated",
    "--semantic",
    "off",
    "--max-epochs",
    "2",
    "--serve-new-options",
    "--force-threshold",
    "coin=0.4",
    "--min-radius",
    "3",
  ]);
  assert.equal(run.code, 0, run.stderr);
  const table = await loadBundle(out);
  assert.equal(table.settings.serve_new_options, true);
  assert.deepEqual(table.settings.force_thresholds, { coin: 0.4 });
  assert.equal(table.settings.min_radius, 3);
  const a = assess(
    table,
    stateOf(table),
    prepareText(table, stateOf(table), "i need my parcel"),
    "topic",
    {
      options: ["shipping", "teleport"],
    },
    QUIET_GUARD,
  );
  assert.equal(a.answer.flag, "new_options_served");
});

Deno.test("the command line reports usage errors in one line with exit code 2", async (t) => {
  await trainedBundle();
  // Commands run in an empty folder, where a default "bundle" folder would show.
  const scratch = await Deno.makeTempDir({ dir: work });
  const cases: [string, string[], RegExp][] = [
    ["an unknown flag", [
      "train",
      "--traces",
      TRAIN_FILE,
      "--bogus",
    ], /^error: unknown flag --bogus \(see train --help\)$/],
    ["a missing --traces", ["train", "--out", `${work}/x`], /--traces/],
    ["an --alpha out of range", [
      "train",
      "--traces",
      TRAIN_FILE,
      "--alpha",
      "1.5",
    ], /--alpha must be in \(0, 1\): got "1\.5"/],
    ["a --drift-window out of range, in the words serve uses", [
      "train",
      "--traces",
      TRAIN_FILE,
      "--drift-window",
      "1.5",
    ], /^error: --drift-window must be a positive integer: got "1\.5"$/],
    ["a negative --alpha", [
      "train",
      "--traces",
      TRAIN_FILE,
      "--alpha",
      "-0.1",
    ], /^error: --alpha must be in \(0, 1\): got "-0\.1"$/],
    ["a flag without its value", [
      "train",
      "--traces",
    ], /^error: --traces needs a value \(see train --help\)$/],
    [
      "a value that looks like a flag",
      [
        "eval",
        "--bundle",
        BUNDLE,
        "--traces",
        "-x.jsonl",
      ],
      /^error: --traces needs a value; to give one that starts with "-", write --traces=-VALUE$/,
    ],
    [
      "an argument without a flag",
      [
        "inspect",
        BUNDLE,
      ],
      /^error: unexpected argument ".*bundle": every value follows its flag \(see inspect --help\)$/,
    ],
    ["an --alpha that is not a number", [
      "train",
      "--traces",
      TRAIN_FILE,
      "--alpha",
      "abc",
    ], /--alpha/],
    [
      "a bad --seed",
      ["train", "--traces", TRAIN_FILE, "--seed", "1.5"],
      /--seed/,
    ],
    [
      "a --min-radius of 0",
      ["train", "--traces", TRAIN_FILE, "--min-radius", "0"],
      /--min-radius must be a positive integer/,
    ],
    [
      "shares that leave too little to train on",
      [
        "train",
        "--traces",
        TRAIN_FILE,
        "--calibration-share",
        "0.6",
        "--test-share",
        "0.35",
      ],
      /at least 10% of traces to train on/,
    ],
    ["a bad --force-threshold", [
      "train",
      "--traces",
      TRAIN_FILE,
      "--force-threshold",
      "topic",
    ], /--force-threshold/],
    ["a forced threshold for an unknown question", [
      "train",
      "--traces",
      TRAIN_FILE,
      "--force-threshold",
      "nope=0.5",
    ], /nope/],
    ["a traces file that does not exist", [
      "train",
      "--traces",
      `${work}/missing.jsonl`,
    ], /missing\.jsonl: no such file/],
    ["eval without --traces", ["eval", "--bundle", BUNDLE], /--traces/],
    ["eval without --bundle", ["eval", "--traces", TRAIN_FILE], /--bundle/],
    ["eval with a traces file that does not exist", [
      "eval",
      "--bundle",
      BUNDLE,
      "--traces",
      `${work}/nope.csv`,
    ], /nope\.csv: no such file/],
    ["eval with an unknown flag", [
      "eval",
      "--bundle",
      BUNDLE,
      "--traces",
      TRAIN_FILE,
      "--fast",
    ], /fast/],
    ["inspect without --bundle", ["inspect"], /--bundle/],
    ["an unknown command", ["frobnicate"], /unknown command "frobnicate"/],
  ];
  for (const [name, args, pattern] of cases) {
    await t.step(name, async () => {
      assert.match(failedInOneLine(await runCli(args, scratch)), pattern);
    });
  }
  // Nothing was written, not even the default bundle folder.
  assert.equal(await exists(`${work}/x`), false);
  assert.deepEqual([...Deno.readDirSync(scratch)], []);
});

Deno.test("train on a bad trace file exits 2 with file:line: reason and writes nothing", async (t) => {
  const good = toJsonl(syntheticTraces({ count: 20, seed: 1 }));
  const cases: [string, string, string, RegExp][] = [
    [
      "invalid JSON",
      "bad.jsonl",
      good + '{"text": "a", "answers": \n',
      /bad\.jsonl:21: not valid JSON/,
    ],
    [
      "a bad answer",
      "bad.jsonl",
      good + '{"text": "a", "answers": {"topic": 3}}\n',
      /bad\.jsonl:21: answer to "topic" must be a string, true or false/,
    ],
    [
      "a CSV without a text column",
      "bad.csv",
      "message,topic\nhi,billing\n",
      /bad\.csv:1: the header has no "text" column/,
    ],
    [
      "too few answers",
      "few.jsonl",
      good,
      /question "topic" has 20 answers; at least \d+ are needed/,
    ],
  ];
  for (const [name, fileName, content, pattern] of cases) {
    await t.step(name, async () => {
      const dir = await Deno.makeTempDir({ dir: work });
      const file = `${dir}/${fileName}`;
      await Deno.writeTextFile(file, content);
      const run = await runCli([
        "train",
        "--traces",
        file,
        "--out",
        `${dir}/out`,
        "--quiet",
      ]);
      assert.match(failedInOneLine(run), pattern);
      const left = [];
      for await (const e of Deno.readDir(dir)) left.push(e.name);
      assert.deepEqual(left, [fileName], "nothing written");
    });
  }
});

Deno.test("train --help documents the trace flags and the drift alarm at evidence 2/D", async () => {
  const run = await runCli(["train", "--help"]);
  assert.equal(run.code, 0);
  assert.match(
    run.stdout,
    /--drift-delta D +online drift alarm at evidence 2\/D/,
  );
  assert.doesNotMatch(run.stdout, /1\/D/);
  for (
    const flag of [
      "--traces FILE",
      "--text-column NAME",
      "--answer-columns A,B",
    ]
  ) {
    assert.ok(run.stdout.includes(flag), flag);
  }
  const ev = await runCli(["eval", "--help"]);
  assert.ok(ev.stdout.includes("--answer-columns A,B"));
});

Deno.test("train --help states auto's group rule: enough groups by their effective number", async () => {
  const run = await runCli(["train", "--help"]);
  assert.equal(run.code, 0);
  const split = run.stdout.slice(
    run.stdout.indexOf("--split MODE"),
    run.stdout.indexOf("--similarity S"),
  ).replace(/\s+/g, " ");
  assert.match(
    split,
    new RegExp(
      `at least ${AUTO_MIN_GROUPS} groups \\(by their effective number\\)`,
    ),
  );
});
