import assert from "node:assert/strict";
import {
  parseCsvTraces,
  parseJsonlTraces,
  parseTraceText,
  readTraces,
} from "../src/traces/mod.ts";
import { stateText } from "../src/engine/text.ts";
import { train } from "../src/train/trainer.ts";
import { TrainingError } from "../src/train/admit.ts";
import {
  exists,
  SHARED_DATA,
  smallTrainOptions,
  syntheticTraces,
  throwsWith,
  toJsonl,
} from "./_fixtures.ts";

Deno.test("parseJsonlTraces() reads choices, yes/no booleans and partial answers", () => {
  const content = [
    `{"text": "where is my parcel", "answers": {"topic": "shipping", "urgent": false}}`,
    ``,
    `{"text": "refund me now", "answers": {"topic": "refund", "urgent": true}}`,
    `{"text": "password reset", "answers": {"topic": "account"}}`,
    `{"text": "it is late", "answers": {"urgent": true}}`,
  ].join("\n");
  const set = parseJsonlTraces("t.jsonl", content);
  assert.deepEqual(set.texts, [
    "where is my parcel",
    "refund me now",
    "password reset",
    "it is late",
  ]);
  const topic = set.questions.find((q) => q.name === "topic")!;
  const urgent = set.questions.find((q) => q.name === "urgent")!;
  assert.equal(topic.kind, "choice");
  assert.deepEqual(topic.options, ["shipping", "refund", "account"]);
  assert.deepEqual([...topic.labels], [0, 1, 2, -1]);
  assert.equal(urgent.kind, "yes_no");
  assert.deepEqual(urgent.options, ["true", "false"]);
  assert.deepEqual([...urgent.labels], [1, 0, -1, 0]);
});

Deno.test("parseJsonlTraces() serialises an object text exactly as stateText() does", () => {
  const state = {
    message: "Where is my parcel?",
    order: { id: 17, items: ["a", "b"] },
    vip: true,
  };
  const set = parseJsonlTraces(
    "t.jsonl",
    JSON.stringify({ text: state, answers: { topic: "shipping" } }) + "\n" +
      JSON.stringify({ text: "x", answers: { topic: "refund" } }),
  );
  assert.equal(set.texts[0], stateText(state));
  assert.equal(set.texts[0], JSON.stringify(state));
});

Deno.test("parseJsonlTraces() names file and line of a bad trace", () => {
  const good = `{"text": "a", "answers": {"q": "x"}}`;
  const cases: [string, RegExp][] = [
    [`{"text": "a", "answers": `, /^t\.jsonl:2: not valid JSON/],
    [`[1, 2]`, /^t\.jsonl:2: a trace must be a JSON object/],
    [`"just a string"`, /^t\.jsonl:2: a trace must be a JSON object/],
    [
      `{"text": 5, "answers": {"q": "x"}}`,
      /^t\.jsonl:2: "text" must be a string or an object/,
    ],
    [
      `{"text": "a", "answers": ["x"]}`,
      /^t\.jsonl:2: "answers" must be an object/,
    ],
    [`{"text": "a"}`, /^t\.jsonl:2: "answers" must be an object/],
    [
      `{"text": "a", "answers": {"q": 3}}`,
      /^t\.jsonl:2: answer to "q" must be a string, true or false/,
    ],
    [
      `{"text": "a", "answers": {"q": ""}}`,
      /^t\.jsonl:2: answer to "q" is an empty string/,
    ],
  ];
  for (const [line, pattern] of cases) {
    throwsWith(
      () => parseJsonlTraces("t.jsonl", `${good}\n${line}\n`),
      SyntaxError,
      pattern,
    );
  }
});

Deno.test("parseCsvTraces() reads a text column and one column per question", () => {
  const csv =
    'text,category,urgent\n"hello, where is my card",card_arrival,false\nlost my pin,,true\n"refund ""now""",refund,\n';
  const set = parseCsvTraces("d.csv", csv);
  assert.deepEqual(set.texts, [
    "hello, where is my card",
    "lost my pin",
    'refund "now"',
  ]);
  const cat = set.questions.find((q) => q.name === "category")!;
  assert.equal(cat.kind, "choice");
  assert.deepEqual(cat.options, ["card_arrival", "refund"]);
  assert.deepEqual([...cat.labels], [0, -1, 1]);
  const urgent = set.questions.find((q) => q.name === "urgent")!;
  assert.equal(urgent.kind, "yes_no");
  assert.deepEqual([...urgent.labels], [1, 0, -1]);
  // parseTraceText() picks CSV by the file name.
  assert.deepEqual(parseTraceText("D.CSV", csv).texts, set.texts);
});

Deno.test("parseCsvTraces() refuses a header without a text column, naming file and line", () => {
  throwsWith(
    () => parseCsvTraces("d.csv", "message,category\nhi,a\nho,b\n"),
    SyntaxError,
    /^d\.csv:1: the header has no "text" column \(columns: "message", "category"\); name the column that holds the text with --text-column NAME$/,
  );
  throwsWith(
    () => parseCsvTraces("d.csv", "text\nhi\n"),
    SyntaxError,
    /^d\.csv:1: .*question column/,
  );
  throwsWith(
    () => parseCsvTraces("d.csv", ""),
    SyntaxError,
    /^d\.csv:1: empty file/,
  );
  throwsWith(
    () => parseCsvTraces("d.csv", "text,q\na,x\nb,y,z\n"),
    SyntaxError,
    /^d\.csv:3: not valid CSV/,
  );
});

Deno.test("train() refuses a choice question with a single option, which parsing accepts, and trains the rest", () => {
  const traces = syntheticTraces({ count: 600, seed: 3 });
  for (const t of traces) t.answers.mono = "only";
  // Parsing accepts it (eval may see one option of a question); training cannot learn a choice.
  const set = parseJsonlTraces("mono.jsonl", toJsonl(traces));
  assert.deepEqual(set.questions.find((q) => q.name === "mono")!.options, [
    "only",
  ]);
  // The other questions train; "mono" is refused, with its reason in the report.
  const warnings: string[] = [];
  const { table, report } = train(set, {
    ...smallTrainOptions(),
    warn: (line) => warnings.push(line),
  });
  assert.equal(table.byName.has("mono"), false);
  assert.equal(table.byName.has("topic"), true);
  assert.match(
    report.refused.join("\n"),
    /question "mono" has a single option \("only"\); a choice needs at least two/,
  );
  assert.match(warnings.join("\n"), /refused question "mono"/);
  // Alone, it leaves nothing to train: a TrainingError.
  const alone = parseJsonlTraces(
    "mono.jsonl",
    toJsonl(traces.map((t) => ({ text: t.text, answers: { mono: "only" } }))),
  );
  throwsWith(
    () => train(alone, smallTrainOptions()),
    TrainingError,
    /question "mono" has a single option/,
  );
});

Deno.test("train() refuses a question with too few answers, naming it, and trains the rest", () => {
  const traces = syntheticTraces({ count: 600, seed: 3 });
  // "rare" is answered on 100 traces only: too few for 59 calibration answers at 20%.
  traces.forEach((t, i) => {
    if (i < 100) t.answers.rare = i % 2 === 0 ? "left" : "right";
  });
  const set = parseJsonlTraces("few.jsonl", toJsonl(traces));
  const { table, report } = train(set, {
    ...smallTrainOptions(),
    warn: () => {},
  });
  assert.equal(table.byName.has("rare"), false);
  assert.match(
    report.refused.join("\n"),
    /question "rare" has 100 answers; at least 295 are needed/,
  );
  const alone = parseJsonlTraces(
    "few.jsonl",
    toJsonl(
      traces.slice(0, 100).map((t) => ({
        text: t.text,
        answers: { rare: t.answers.rare! },
      })),
    ),
  );
  throwsWith(
    () => train(alone, smallTrainOptions()),
    TrainingError,
    /question "rare" has 100 answers; at least 295 are needed/,
  );
});

const BANKING_TRAIN = `${SHARED_DATA}/banking77/train.csv`;
const hasBanking = await exists(BANKING_TRAIN);
if (!hasBanking) {
  console.log(`skipping the BANKING77 trace test: ${BANKING_TRAIN} is absent`);
}

Deno.test({
  name:
    "readTraces() reads banking77/train.csv as one choice question named category",
  ignore: !hasBanking,
  async fn() {
    const set = await readTraces([BANKING_TRAIN]);
    assert.equal(set.questions.length, 1);
    const q = set.questions[0]!;
    assert.equal(q.name, "category");
    assert.equal(q.kind, "choice");
    assert.equal(q.options.length, 77);
    assert.ok(set.texts.length > 9000);
    assert.ok(q.labels.every((l) => l >= 0));
  },
});

Deno.test("parseTraceText() accepts a byte-order mark and Windows line endings", () => {
  const jsonl =
    '\ufeff{"text": "a b", "answers": {"q": "x"}}\r\n{"text": "c", "answers": {"q": "y"}}\r\n';
  const j = parseTraceText("t.jsonl", jsonl);
  assert.deepEqual(j.texts, ["a b", "c"]);
  assert.deepEqual(j.questions[0]!.options, ["x", "y"]);
  const csv = "\ufefftext,q\r\na b,x\r\nc,y\r\n";
  const c = parseTraceText("t.csv", csv);
  assert.deepEqual(c.texts, ["a b", "c"]);
  assert.deepEqual(c.questions[0]!.options, ["x", "y"]);
});

Deno.test("train() refuses a column that looks like identifiers, not a question, and trains the rest", () => {
  const traces = syntheticTraces({ count: 600, seed: 5 });
  traces.forEach((t, i) => (t.answers.id = `row-${i}`));
  const set = parseJsonlTraces("ids.jsonl", toJsonl(traces));
  const { table, report } = train(set, {
    ...smallTrainOptions(),
    warn: () => {},
  });
  assert.equal(table.byName.has("id"), false);
  assert.equal(table.byName.has("topic"), true);
  assert.match(
    report.refused.join("\n"),
    /question "id" has 600 options for 600 answers .*identifier or free-text column/,
  );
});
