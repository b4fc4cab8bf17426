/**
 * The command line as a tool people operate: `eval` says what to do next
 * (options, not-certified counts, the frontier, per-trace predictions),
 * `predict` answers texts on standard input, flag slips get one did-you-mean
 * wording in every command, a column of times is named as such, and the
 * HTML reports render in a real browser.
 */

import assert from "node:assert/strict";
import { loadBundle } from "../src/bundle/files.ts";
import {
  assess,
  disagrees,
  prepareText,
  QUIET_GUARD,
  setThresholdInForce,
  TableState,
} from "../src/engine/mod.ts";
import { alphaToPass } from "../src/eval/frontier.ts";
import { closestName } from "../src/engine/suggest.ts";
import { adviceInBrief } from "../src/train/mod.ts";
import { readTraces } from "../src/traces/mod.ts";
import { binomialTail } from "../src/guarantee/distributions.ts";
import { chromium } from "./_browser_playwright.ts";
import { exists, runCli, syntheticTraces, toJsonl } from "./_fixtures.ts";

const work = Deno.makeTempDirSync({ prefix: "dtable-tool-" });
globalThis.addEventListener(
  "unload",
  () => Deno.removeSync(work, { recursive: true }),
);
const BUNDLE = `${work}/bundle`;
const FRESH = `${work}/fresh.jsonl`;
Deno.writeTextFileSync(
  `${work}/train.jsonl`,
  toJsonl(syntheticTraces({ count: 2000, seed: 7, noise: 0.01 })),
);
Deno.writeTextFileSync(
  FRESH,
  toJsonl(syntheticTraces({ count: 400, seed: 9, noise: 0.03 })),
);

let trained: Promise<void> | undefined;
function bundle(): Promise<void> {
  trained ??= (async () => {
    const run = await runCli([
      "train",
      "--traces",
      `${work}/train.jsonl`,
      "--out",
      BUNDLE,
      "--quiet",
    ]);
    assert.equal(run.code, 0, run.stdout + run.stderr);
  })();
  return trained;
}

async function runWithInput(args: string[], input: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--quiet",
      new URL("../main.ts", import.meta.url).pathname,
      ...args,
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(input));
  await writer.close();
  const out = await child.output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

Deno.test("alphaToPass() is the smallest alpha whose binomial test passes", () => {
  for (const [k, n] of [[0, 59], [3, 200], [10, 120], [0, 1]] as const) {
    const a = alphaToPass(k, n, 0.05)!;
    assert.ok(binomialTail(k, n, a) <= 0.05 + 1e-9);
    assert.ok(binomialTail(k, n, a - 1e-6) > 0.05);
  }
  assert.equal(alphaToPass(0, 0, 0.05), null);
});

Deno.test("closestName() finds slips, swaps and unique beginnings, and nothing far", () => {
  const flags = ["alpha", "delta", "calibration-share", "test-share", "out"];
  assert.equal(closestName("alpah", flags), "alpha");
  assert.equal(closestName("Delta", flags), "delta");
  assert.equal(closestName("calibration", flags), "calibration-share");
  assert.equal(closestName("ot", flags), "out");
  assert.equal(closestName("seed", flags), null);
});

Deno.test("adviceInBrief() keeps how many traces and which alpha would help", () => {
  assert.equal(
    adviceInBrief(
      "at the test's main candidate ...; learning curve (...): ... a pass needs about 6,300 traces answering it in all (80% range 4,300-9,800), about 4,800 more (2,800-8,300), of as many different kinds as the ones it has (...); at --alpha 0.075 this calibration split would certify 372 of its 400 answers",
    ),
    "about 2,800-8,300 more traces (learning curve), or --alpha 0.075",
  );
  assert.equal(
    adviceInBrief(
      "...; a pass needs about 9,000 traces answering it in all (80% range 4,000 to over 12,000), about 8,400 more (3,400 to over 11,000), ...",
    ),
    "about 3,400 to over 11,000 more traces (learning curve)",
  );
  assert.equal(
    adviceInBrief(
      "...; at the pace it falls, a pass needs more than 20 times as many traces answering it (over 12,000 more): the curve cannot say how many",
    ),
    "over 12,000 more traces (learning curve)",
  );
  assert.equal(
    adviceInBrief(
      "it has 40 calibration answers and a pass needs at least 59 (about 95 more traces answering it)",
    ),
    "about 95 more traces",
  );
  assert.equal(
    adviceInBrief(
      "even its 59 most confident calibration answers disagree with the model 42.4% of the time, at least alpha (0.05); learning curve (...): ..., at least alpha (0.05) at every size and not falling: more traces of the same kind would not help; cleaner labels would (...)",
    ),
    "cleaner labels (more of the same traces would not help)",
  );
  assert.equal(adviceInBrief("something else"), null);
});

Deno.test("eval --json reports options, not_certified and frontier that match a recount", async () => {
  await bundle();
  const run = await runCli([
    "eval",
    "--bundle",
    BUNDLE,
    "--traces",
    FRESH,
    "--json",
  ]);
  assert.equal(run.code, 0, run.stderr);
  const f = JSON.parse(run.stdout).questions.topic;
  const table = await loadBundle(BUNDLE);
  const state = new TableState(table);
  const open = new TableState(table);
  setThresholdInForce(table, open, "topic", 0);
  const set = await readTraces([FRESH]);
  const qa = set.questions.find((q) => q.name === "topic")!;
  type Counted = {
    answers: number;
    certified: number;
    disagreements: number;
    named: number;
    agreeing: number;
  };
  const none = (): Counted => ({
    answers: 0,
    certified: 0,
    disagreements: 0,
    named: 0,
    agreeing: 0,
  });
  const options: Record<string, Counted> = {};
  const confusions = new Map<string, { count: number; certified: number }>();
  const flags: Record<string, number> = {};
  const certifiable: { confidence: number; wrong: boolean }[] = [];
  set.texts.forEach((text, i) => {
    const expected = qa.options[qa.labels[i]!]!;
    const a = assess(
      table,
      state,
      prepareText(table, state, text),
      "topic",
      {},
      QUIET_GUARD,
    ).answer;
    options[expected] ??= none();
    options[expected].answers++;
    options[a.choice!] ??= none();
    options[a.choice!]!.named++;
    if (a.choice === expected) options[a.choice!]!.agreeing++;
    else {
      const key = `${expected} -> ${a.choice}`;
      const c = confusions.get(key) ?? { count: 0, certified: 0 };
      c.count++;
      if (a.certified) c.certified++;
      confusions.set(key, c);
    }
    if (a.certified) {
      options[a.choice!]!.certified++;
      if (disagrees(a, expected)) options[a.choice!]!.disagreements++;
    } else flags[a.flag!] = (flags[a.flag!] ?? 0) + 1;
    const o = assess(
      table,
      open,
      prepareText(table, open, text),
      "topic",
      {},
      QUIET_GUARD,
    );
    if (o.answer.certified) {
      certifiable.push({
        confidence: o.fullConfidence,
        wrong: disagrees(o.answer, expected),
      });
    }
  });
  for (const [name, o] of Object.entries(options)) {
    const got = f.options[name];
    assert.equal(got.answers, o.answers, name);
    assert.equal(got.certified, o.certified, name);
    assert.equal(got.disagreements, o.disagreements, name);
    const right = o.certified - o.disagreements;
    assert.equal(got.precision, o.certified === 0 ? null : right / o.certified);
    assert.equal(got.recall, right / o.answers);
    assert.equal(got.f1, (2 * right) / (o.certified + o.answers));
    assert.deepEqual(got.all_answers, {
      named: o.named,
      agreeing: o.agreeing,
      precision: o.named === 0 ? null : o.agreeing / o.named,
      recall: o.agreeing / o.answers,
      f1: (2 * o.agreeing) / (o.named + o.answers),
    });
  }
  // Weighted recall over all answers is the accuracy.
  assert.ok(
    Math.abs(f.averages.all_answers.weighted.recall - f.accuracy) < 1e-12,
  );
  const macroF1 = Object.values(options).map((o) =>
    (2 * (o.certified - o.disagreements)) / (o.certified + o.answers)
  );
  assert.ok(
    Math.abs(
      f.averages.certified.macro.f1 -
        macroF1.reduce((x, y) => x + y, 0) / macroF1.length,
    ) < 1e-12,
  );
  const largest = [...confusions].sort((x, y) =>
    y[1].count - x[1].count || (x[0] < y[0] ? -1 : 1)
  ).slice(0, 10);
  assert.ok(largest.length > 0, "the fresh traces carry some confusions");
  assert.deepEqual(
    f.confusions.map((
      c: { reference: string; answer: string; count: number },
    ) => [`${c.reference} -> ${c.answer}`, c.count]),
    largest.map(([key, c]) => [key, c.count]),
  );
  for (const c of f.confusions) {
    const key = `${c.reference} -> ${c.answer}`;
    assert.equal(c.certified, confusions.get(key)!.certified, key);
    assert.equal(c.share, c.count / options[c.reference]!.answers, key);
  }
  assert.deepEqual(
    Object.entries(f.not_certified).sort(),
    Object.entries(flags).sort(),
  );
  const q = table.byName.get("topic")!;
  assert.ok(f.frontier.length >= q.calibration.candidates.length - 1);
  const inForce = f.frontier.filter((p: { in_force: boolean }) => p.in_force);
  assert.equal(inForce.length, 1);
  assert.equal(inForce[0].threshold, q.calibration.threshold);
  // At the threshold in force, the frontier counts what eval certified.
  assert.equal(inForce[0].certified, f.certified);
  for (const p of f.frontier) {
    const at = certifiable.filter((c) => c.confidence >= p.threshold);
    const wrong = at.filter((c) => c.wrong).length;
    assert.equal(p.certified, at.length);
    assert.equal(p.disagreements, wrong);
    assert.equal(p.coverage, at.length / set.texts.length);
    assert.equal(p.passes_at_alpha, alphaToPass(wrong, at.length, 0.05));
  }
});

Deno.test("eval in words prints tables and plain words, never n/a or (never)", async () => {
  await bundle();
  const run = await runCli([
    "eval",
    "--bundle",
    BUNDLE,
    "--traces",
    FRESH,
    "--stream",
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^ {2}not certified: /m);
  assert.match(
    run.stdout,
    /^ {4}option +answers +certified +disagree +precision +recall +f1$/m,
  );
  assert.match(
    run.stdout,
    /^ {2}averages of certified answers: macro precision \d+\.\d%, recall \d+\.\d%, f1 \d+\.\d%; weighted precision /m,
  );
  assert.match(run.stdout, /^ {2}over all answers, certified or not: macro /m);
  assert.match(
    run.stdout,
    /^ {4}reference -> table's answer +count +share +certified$/m,
  );
  assert.match(
    run.stdout,
    /^ {4}threshold +certified +disagree +passes at alpha$/m,
  );
  assert.match(run.stdout, /^ {4}0\.\d{4} \* /m);
  assert.match(run.stdout, /drift alarm: never raised over these traces/);
  assert.doesNotMatch(run.stdout, /n\/a|\(never\)/);
});

Deno.test("eval --predictions writes one JSON line per trace", async () => {
  await bundle();
  const file = `${work}/predictions.jsonl`;
  const run = await runCli([
    "eval",
    "--bundle",
    BUNDLE,
    "--traces",
    FRESH,
    "--predictions",
    file,
    "--json",
  ]);
  assert.equal(run.code, 0, run.stderr);
  const lines = (await Deno.readTextFile(file)).trimEnd().split("\n").map((
    l,
  ) => JSON.parse(l));
  const set = await readTraces([FRESH]);
  assert.equal(lines.length, set.texts.length);
  const figures = JSON.parse(run.stdout).questions.topic;
  assert.equal(
    lines.filter((l) => l.answers.topic.certified && l.answers.topic.disagrees)
      .length,
    figures.disagreements,
  );
  assert.equal(lines[0].trace, 1);
  assert.equal(lines[0].text, set.texts[0]);
  assert.deepEqual(Object.keys(lines[0].answers.topic), [
    "reference",
    "answer",
    "certified",
    "flag",
    "confidence",
    "disagrees",
  ]);
});

Deno.test("eval --predictions keeps one type per field: a yes/no reference is a boolean, as its answer", async () => {
  await bundle();
  const file = `${work}/predictions-types.jsonl`;
  const run = await runCli([
    "eval",
    "--bundle",
    BUNDLE,
    "--traces",
    FRESH,
    "--predictions",
    file,
  ]);
  assert.equal(run.code, 0, run.stderr);
  const lines = (await Deno.readTextFile(file)).trimEnd().split("\n").map((
    l,
  ) => JSON.parse(l));
  const urgent = lines.map((l) => l.answers.urgent).filter((a) => a);
  assert.ok(urgent.length > 0);
  for (const a of urgent) {
    assert.equal(typeof a.reference, "boolean", JSON.stringify(a));
    if (a.answer !== null) assert.equal(typeof a.answer, "boolean");
    assert.equal(a.disagrees, a.reference !== a.answer);
  }
  for (const l of lines) {
    assert.equal(typeof l.answers.topic.reference, "string");
  }
});

Deno.test("predict answers 200 texts in 200 lines, as /v1/decide answers them", async () => {
  await bundle();
  const texts = syntheticTraces({ count: 200, seed: 11 }).map((t) => t.text);
  const run = await runWithInput(
    ["predict", "--bundle", BUNDLE],
    texts.join("\n") + "\n",
  );
  assert.equal(run.code, 0, run.stderr);
  const lines = run.stdout.trimEnd().split("\n");
  assert.equal(lines.length, 200);
  const table = await loadBundle(BUNDLE);
  const first = JSON.parse(lines[0]!);
  assert.deepEqual(Object.keys(first.answers), ["topic", "urgent"]);
  const state = new TableState(table);
  const a = assess(
    table,
    state,
    prepareText(table, state, texts[0]!),
    "topic",
    {},
    QUIET_GUARD,
  ).answer;
  assert.equal(first.answers.topic.choice, a.choice);
  assert.equal(first.answers.topic.certified, a.certified);
  assert.deepEqual(Object.keys(first.answers.topic), [
    "choice",
    "confidence",
    "certified",
    "flag",
    "radius",
    "probabilities",
  ]);
});

Deno.test("predict --top K prints the K most probable options, the answer first, and refuses a K below 1", async () => {
  await bundle();
  const texts = syntheticTraces({ count: 20, seed: 12 }).map((t) => t.text);
  const input = texts.join("\n") + "\n";
  const full = await runWithInput(["predict", "--bundle", BUNDLE], input);
  const top = await runWithInput(
    ["predict", "--bundle", BUNDLE, "--top", "2"],
    input,
  );
  assert.equal(top.code, 0, top.stderr);
  const fullLines = full.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
  top.stdout.trimEnd().split("\n").forEach((line, i) => {
    const got = JSON.parse(line).answers;
    const want = fullLines[i]!.answers;
    const { probabilities: gp, ...gRest } = got.topic;
    const { probabilities: wp, ...wRest } = want.topic;
    assert.deepEqual(gRest, wRest);
    assert.deepEqual(got.urgent, want.urgent);
    const best = Object.entries(wp as Record<string, number>)
      .filter(([o]) => o !== want.topic.choice)
      .sort((x, y) => y[1] - x[1])[0]!;
    assert.deepEqual(Object.entries(gp), [
      [want.topic.choice, wp[want.topic.choice]],
      best,
    ]);
  });
  for (const bad of ["0", "1.5", "two"]) {
    const run = await runWithInput(
      ["predict", "--bundle", BUNDLE, "--top", bad],
      input,
    );
    assert.equal(run.code, 2);
    assert.match(run.stderr, /--top must be a whole number, 1 or more/);
  }
});

Deno.test("predict reads JSON Lines with text and id, and answers an unreadable line with an error in its place", async () => {
  await bundle();
  const run = await runWithInput(
    ["predict", "--bundle", BUNDLE, "--question", "topic"],
    '{"id": "a", "text": "my parcel has not arrived"}\n{"text": 5}\n{"id": 7, "text": "refund my money"}\n',
  );
  assert.equal(run.code, 2);
  const lines = run.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.equal(lines.length, 3);
  assert.equal(lines[0].id, "a");
  assert.deepEqual(Object.keys(lines[0].answers), ["topic"]);
  assert.match(
    lines[1].error,
    /^line 2: "text" must be a string or a JSON object: got 5$/,
  );
  assert.equal(lines[2].id, 7);
  assert.match(run.stderr, /^error: line 2: /m);
});

Deno.test("predict names the field a line lacks and keeps the line's id in its error answer", async () => {
  await bundle();
  const run = await runWithInput(
    ["predict", "--bundle", BUNDLE, "--question", "topic"],
    '{"id": "a", "text": "my parcel has not arrived"}\n{"id": 7, "txt": "hi"}\n{"id": "b", "text": [1]}\n{}\n',
  );
  assert.equal(run.code, 2);
  const lines = run.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.equal(lines.length, 4);
  assert.deepEqual(lines[1], {
    id: 7,
    error: 'line 2: has no "text" field (its fields: "id", "txt")',
  });
  assert.deepEqual(Object.keys(lines[2]), ["id", "error"]);
  assert.equal(lines[2].id, "b");
  assert.match(
    lines[2].error,
    /^line 3: "text" must be a string or a JSON object: got \[1\]$/,
  );
  assert.deepEqual(lines[3], {
    error: 'line 4: has no "text" field (it has no fields)',
  });
  assert.match(run.stderr, /^error: line 2: has no "text" field/m);
});

Deno.test("every command words a mistyped flag the same way, with what it most likely meant", async (t) => {
  await bundle();
  const cases: [string, string[], string][] = [
    ["train", ["--traces", FRESH, "--alpah", "0.1"], "--alpha"],
    ["eval", ["--bundle", BUNDLE, "--tracse", FRESH], "--traces"],
    ["inspect", ["--bundel", BUNDLE], "--bundle"],
    ["serve", ["--bundle", BUNDLE, "--prot", "0"], "--port"],
    ["predict", ["--bundle", BUNDLE, "--questoin", "topic"], "--question"],
  ];
  for (const [command, args, meant] of cases) {
    await t.step(command, async () => {
      const run = await runCli([command, ...args]);
      assert.equal(run.code, 2, run.stderr);
      const typed = args.find((a) =>
        a.startsWith("--") && a !== meant &&
        !["--bundle", "--traces"].includes(a)
      )!;
      assert.equal(
        run.stderr.trim(),
        `error: unknown flag ${typed} (did you mean ${meant}?) (see ${command} --help)`,
      );
    });
  }
});

Deno.test("train names a column of times and says to call it time", async (t) => {
  const rows = syntheticTraces({ count: 1500, seed: 4, noise: 0.01 }).map((
    tr,
    i,
  ) =>
    `"${tr.text}",${tr.answers.topic},${
      new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString()
    }`
  );
  await t.step("beside answers: left out with a warning", async () => {
    const dir = `${work}/times`;
    await Deno.mkdir(dir, { recursive: true });
    await Deno.writeTextFile(
      `${dir}/t.csv`,
      `text,topic,created\n${rows.join("\n")}\n`,
    );
    const run = await runCli([
      "train",
      "--traces",
      `${dir}/t.csv`,
      "--out",
      `${dir}/b`,
      "--quiet",
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stderr,
      /column "created" holds times \(such as "2024-01-01T00:00:00\.000Z"\), not answers, so it is left out: rename it "time" and train splits by it/,
    );
    assert.doesNotMatch(run.stderr, /identifier/);
  });
  await t.step("alone: exit 2 with the same advice", async () => {
    const dir = `${work}/times-only`;
    await Deno.mkdir(dir, { recursive: true });
    await Deno.writeTextFile(
      `${dir}/t.csv`,
      `text,created\n${
        rows.map((r) => r.replace(/,[a-z]+,/, ",")).join("\n")
      }\n`,
    );
    const run = await runCli([
      "train",
      "--traces",
      `${dir}/t.csv`,
      "--out",
      `${dir}/b`,
      "--quiet",
    ]);
    assert.equal(run.code, 2);
    assert.match(
      run.stderr,
      /^error: nothing to train: column "created" holds times .*rename it "time"/,
    );
  });
});

const CHROMIUM = "/usr/bin/chromium";
const noChromium = (() => {
  try {
    Deno.statSync(CHROMIUM);
    return false;
  } catch {
    return true;
  }
})();

Deno.test({
  name:
    "the HTML reports of train and eval render offline in Chromium: frontier plot, option table, split, advice",
  ignore: noChromium,
  fn: async () => {
    await bundle();
    // An uncalibrated question (a coin) for the advice; its bundle is written anyway.
    const coinTraces = `${work}/coin.jsonl`;
    await Deno.writeTextFile(
      coinTraces,
      toJsonl(
        syntheticTraces({ count: 2000, seed: 7, noise: 0.01, coin: true }),
      ),
    );
    const trainReport = `${work}/train-report.html`;
    const refused = await runCli([
      "train",
      "--traces",
      coinTraces,
      "--out",
      `${work}/coin-bundle`,
      "--quiet",
      "--report-html",
      trainReport,
    ]);
    assert.equal(refused.code, 3, refused.stderr);
    assert.equal(await exists(`${work}/coin-bundle`), false);
    const evalReport = `${work}/eval-report.html`;
    const evaluated = await runCli([
      "eval",
      "--bundle",
      BUNDLE,
      "--traces",
      FRESH,
      "--report-html",
      evalReport,
    ]);
    assert.equal(evaluated.code, 0, evaluated.stderr);
    const profile = await Deno.makeTempDir({ prefix: "dtable-report-" });
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu"],
      headless: true,
    });
    try {
      const page = context.pages()[0] ?? await context.newPage();
      const requests: string[] = [];
      context.on("request", (r) => requests.push(r.url()));
      for (const file of [trainReport, evalReport]) {
        requests.length = 0;
        await page.goto(`file://${file}`);
        // Nothing but the file itself is fetched: the report is self-contained.
        assert.deepEqual(requests, [`file://${file}`]);
        const topic = page.locator("#q-topic");
        const box = await topic.locator("figure svg").boundingBox();
        assert.ok(box !== null && box.width > 300 && box.height > 150);
        assert.ok(await topic.locator("svg circle").count() >= 3);
        assert.equal(await topic.locator("svg circle.in-force").count(), 1);
        const rows = await topic.locator("table.options tbody tr").count();
        assert.equal(rows, 4);
        assert.match(
          await topic.locator("table.options thead").innerText(),
          /F1\s+all: precision\s+all: recall\s+all: F1/,
        );
        assert.equal(
          await topic.locator("table.averages tbody tr").count(),
          4,
        );
        assert.ok(
          await topic.locator("table.confusions tbody tr").count() >= 1,
        );
        assert.match(await page.locator("body").innerText(), /split: random/i);
      }
      await page.goto(`file://${trainReport}`);
      const advice = await page.locator("#q-coin .advice").innerText();
      assert.match(advice, /What would help/);
      assert.match(advice, /cleaner labels|more traces|--alpha/);
      assert.match(
        await page.locator("body").innerText(),
        /No bundle written: 1 of 3 questions uncalibrated/,
      );
    } finally {
      await context.close();
      await Deno.remove(profile, { recursive: true }).catch(() => {});
    }
  },
});
