import assert from "node:assert/strict";
import {
  parseTraceText,
  type ReadProgress,
  readTraces,
  type TraceSet,
  TraceSetBuilder,
} from "../src/traces/mod.ts";
import { JsonArraySplitter } from "../src/traces/json_array.ts";
import { LineSplitter } from "../src/traces/_lines.ts";
import {
  exists,
  rejectsWith,
  rng,
  SHARED_DATA,
  tempDir,
  throwsWith,
} from "./_fixtures.ts";

/** `text` as a stream of UTF-8 chunks of `size` bytes (characters may straddle two). */
function streamOf(text: string, size: number): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= bytes.length) return c.close();
      c.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}

async function gzip(text: string): Promise<Uint8Array> {
  const stream = new Blob([text]).stream().pipeThrough(
    new CompressionStream("gzip"),
  );
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** A set as plain data, for deep comparison. */
function plain(set: TraceSet) {
  return {
    texts: set.texts,
    questions: set.questions.map((q) => ({ ...q, labels: [...q.labels] })),
    times: set.times && [...set.times],
    groups: set.groups && [...set.groups],
    groupNames: set.groupNames,
  };
}

const JSONL = [
  `{"text": "où est ma carte", "answers": {"topic": "card", "urgent": false}, "time": "2024-05-01T10:00:00Z", "group": "u1"}`,
  ``,
  `{"text": "カードが届かない", "answers": {"topic": "card"}, "group": "u2"}`,
  `{"text": "refund now", "answers": {"topic": "refund", "urgent": true}, "time": 1714557600}\r`,
  `{"text": {"subject": "a [b], c", "body": "d\\"e"}, "answers": {"topic": "other", "urgent": "TRUE"}}`,
].join("\n");

const CSV = [
  "text,topic,urgent,group",
  `où est ma carte,card,false,u1`,
  `"カードが届かない, vite",card,,u2`,
  `"refund ""now""\nplease",refund,true,`,
].join("\r\n") + "\r\n";

Deno.test("LineSplitter splits chunked text into the lines of the whole", () => {
  const text = "a\r\nbb\n\nccc\r\n\r\nd\re\nlast without newline";
  const whole = text.split("\n").map((l) => l.replace(/\r$/, ""));
  const random = rng(5);
  for (let round = 0; round < 200; round++) {
    const lines: string[] = [];
    const s = new LineSplitter();
    for (let at = 0; at < text.length;) {
      const n = 1 + Math.floor(random() * 6);
      s.push(text.slice(at, at + n), (line) => lines.push(line));
      at += n;
    }
    s.end((line) => lines.push(line));
    assert.deepEqual(lines, whole);
    assert.equal(s.lines, whole.length);
  }
  // A final newline ends the last line: no empty line after it.
  const lines: string[] = [];
  const s = new LineSplitter();
  s.push("x\ny\n", (l) => lines.push(l));
  s.end((l) => lines.push(l));
  assert.deepEqual(lines, ["x", "y"]);
});

Deno.test("JsonArraySplitter finds each element whatever the chunks, strings and nesting", () => {
  const elements = [
    `{"text": "a, [b] {c}", "answers": {"q": "x"}}`,
    `{"text": "quote \\" and \\\\", "n": [1, [2, {"k": "]"}]]}`,
    `17`,
    `"a string, with a comma"`,
    `[1, 2]`,
    `null`,
  ];
  const text = `\ufeff [\n  ${elements.join(",\n  ")}\n]\n`;
  const random = rng(9);
  for (let round = 0; round < 200; round++) {
    const out: [string, number, number][] = [];
    const s = new JsonArraySplitter("a.json");
    for (let at = 0; at < text.length;) {
      const n = 1 + Math.floor(random() * 8);
      s.push(text.slice(at, at + n), (t, line, i) => out.push([t, line, i]));
      at += n;
    }
    s.end();
    assert.deepEqual(out, elements.map((e, i) => [e, i + 2, i + 1]));
  }
  const empty = new JsonArraySplitter("e.json");
  empty.push("[ ]", () => assert.fail("no element"));
  empty.end();
});

Deno.test("JsonArraySplitter names file and line of a malformed array", () => {
  const cases: [string, RegExp][] = [
    [`{"text": "a"}`, /^a\.json:1: a JSON array file must start with "\["/],
    [`[1,\n 2,\n]`, /^a\.json:3: element 3 is missing \(a comma too many\?\)$/],
    [`[,1]`, /^a\.json:1: element 1 is missing/],
    [`[1]\n[2]`, /^a\.json:2: text after the closing "\]" of the array$/],
    [
      `[1,\n {"a": "]"`,
      /^a\.json:2: the file ends before the array's closing "\]" \(in element 2\)$/,
    ],
    [``, /^a\.json:1: empty file/],
  ];
  for (const [text, pattern] of cases) {
    throwsWith(
      () => {
        const s = new JsonArraySplitter("a.json");
        s.push(text, () => {});
        s.end();
      },
      SyntaxError,
      pattern,
    );
  }
});

Deno.test("readTraces() reads stdin in small chunks exactly as parseTraceText() reads the whole", async () => {
  const json = `[\n${
    JSONL.split("\n").filter((l) => l.trim() !== "").map((l) => l.trim())
      .join(",\n")
  }\n]`;
  const tsv = CSV.replaceAll(",", "\t").replace(
    `"カードが届かない\t vite"`,
    `"カードが届かない, vite"`,
  );
  // stdin has no name: its format comes from its first bytes.
  const cases: [string, string][] = [
    ["t.jsonl", JSONL],
    ["t.json", json],
    ["t.csv", CSV],
    ["t.tsv", tsv],
  ];
  for (const [name, text] of cases) {
    const whole = plain(parseTraceText(name, text));
    for (const size of [1, 2, 3, 7, 64, 1 << 16]) {
      const read = await readTraces(["-"], { stdin: streamOf(text, size) });
      assert.deepEqual(plain(read), {
        ...whole,
        // Errors and messages name stdin, the set is the same.
      }, `${name} in chunks of ${size}`);
    }
  }
  const csv = plain(parseTraceText("t.csv", CSV));
  assert.deepEqual(csv.texts[2], 'refund "now"\nplease');
  assert.equal(plain(parseTraceText("t.tsv", tsv)).questions.length, 2);
});

Deno.test("readTraces() reads gzip files by name or by their first bytes", async () => {
  await using dir = await tempDir();
  const jsonlGz = `${dir.path}/t.jsonl.gz`;
  const csvGz = `${dir.path}/t.CSV.GZ`;
  const unnamed = `${dir.path}/t.jsonl`;
  await Deno.writeFile(jsonlGz, await gzip(JSONL));
  await Deno.writeFile(csvGz, await gzip(CSV));
  await Deno.writeFile(unnamed, await gzip(JSONL));
  const expected = plain(parseTraceText("t.jsonl", JSONL));
  assert.deepEqual(plain(await readTraces([jsonlGz])), expected);
  assert.deepEqual(plain(await readTraces([unnamed])), expected);
  assert.deepEqual(
    plain(await readTraces([csvGz])),
    plain(parseTraceText("t.csv", CSV)),
  );
  // Gzip on stdin too.
  const gz = await gzip(JSONL);
  const stdin = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(gz.slice(0, 1));
      c.enqueue(gz.slice(1));
      c.close();
    },
  });
  assert.deepEqual(plain(await readTraces(["-"], { stdin })), expected);
});

Deno.test("readTraces() refuses damaged gzip, and a .gz name on plain text, naming the file", async () => {
  await using dir = await tempDir();
  const gz = await gzip(`${JSONL}\n`.repeat(20));
  const cut = `${dir.path}/cut.jsonl.gz`;
  await Deno.writeFile(cut, gz.slice(0, gz.length - 12));
  await rejectsWith(
    readTraces([cut]),
    SyntaxError,
    new RegExp(`^${cut}: not valid gzip data \\(`),
  );
  const plainText = `${dir.path}/plain.jsonl.gz`;
  await Deno.writeTextFile(plainText, JSONL);
  await rejectsWith(
    readTraces([plainText]),
    SyntaxError,
    new RegExp(
      `^${plainText}: the name ends in \\.gz but the content is not gzip data$`,
    ),
  );
});

Deno.test("readTraces() reads several files in order into one set", async () => {
  await using dir = await tempDir();
  const a = `${dir.path}/a.jsonl`, b = `${dir.path}/b.csv`;
  await Deno.writeTextFile(
    a,
    `{"text": "one", "answers": {"topic": "x", "urgent": true}, "group": "g1"}\n` +
      `{"text": "two", "answers": {"topic": "y"}}\n`,
  );
  await Deno.writeTextFile(
    b,
    "text,topic,urgent,time\none,z,0,5\nthree,x,1,\n",
  );
  const set = await readTraces([a, b]);
  assert.deepEqual(set.texts, ["one", "two", "one", "three"]);
  const topic = set.questions.find((q) => q.name === "topic")!;
  assert.deepEqual(topic.options, ["x", "y", "z"]);
  assert.deepEqual([...topic.labels], [0, 1, 2, 0]);
  // JSON true and CSV 1/0 are one yes/no question.
  const urgent = set.questions.find((q) => q.name === "urgent")!;
  assert.equal(urgent.kind, "yes_no");
  assert.deepEqual([...urgent.labels], [0, -1, 1, 0]);
  assert.deepEqual([...set.times!], [NaN, NaN, 5, NaN]);
  assert.deepEqual([...set.groups!], [0, -1, -1, -1]);
  // Reversed, the order of traces and options follows.
  const reversed = await readTraces([b, a]);
  assert.deepEqual(reversed.texts, ["one", "three", "one", "two"]);
  assert.deepEqual(
    reversed.questions.find((q) => q.name === "topic")!.options,
    ["z", "x", "y"],
  );
});

Deno.test("readTraces() refuses a question whose kind differs between files, naming both", async () => {
  await using dir = await tempDir();
  const a = `${dir.path}/a.csv`, b = `${dir.path}/b.csv`;
  await Deno.writeTextFile(a, "text,urgent\none,true\ntwo,false\n");
  await Deno.writeTextFile(b, "text,urgent\nthree,maybe\nfour,true\n");
  await rejectsWith(
    readTraces([a, b]),
    TypeError,
    new RegExp(
      `^${b}: question "urgent" is a choice \\("maybe", "true"\\) here but yes/no in ${a}; its answers must be of one kind in every file$`,
    ),
  );
});

Deno.test("TraceSetBuilder keeps one string per distinct text: repeats cost a slot, not a copy", () => {
  const b = new TraceSetBuilder();
  b.beginFile("a");
  const text = "the same long text ".repeat(20);
  b.answer(b.addTrace(text, NaN, undefined), "q", "x");
  const one = b.heldBytes;
  for (let i = 0; i < 999; i++) {
    // A fresh copy of the same characters each time.
    b.answer(b.addTrace((" " + text).slice(1), NaN, undefined), "q", "x");
  }
  b.endFile();
  assert.equal(b.distinctTexts, 1);
  assert.ok(b.heldBytes - one < 1000 * 16, `${b.heldBytes - one} bytes`);
  const set = b.finish();
  assert.equal(set.texts.length, 1000);
  assert.ok(set.texts.every((t) => t === text));
});

Deno.test("readTraces() opens every file before reading: a missing one fails at once, naming it", async () => {
  await using dir = await tempDir();
  const good = `${dir.path}/good.jsonl`;
  await Deno.writeTextFile(good, JSONL);
  const seen: ReadProgress[] = [];
  await rejectsWith(
    readTraces([good, `${dir.path}/missing.jsonl`], {
      progress: (p) => seen.push(p),
    }),
    Deno.errors.NotFound,
    new RegExp(
      `^Cannot read traces ${dir.path}/missing\\.jsonl: no such file$`,
    ),
  );
  assert.deepEqual(seen, [], "nothing was read");
  await rejectsWith(
    readTraces([dir.path]),
    Deno.errors.IsADirectory,
    /: it is a folder$/,
  );
  await rejectsWith(
    readTraces(["-", good, "-"]),
    RangeError,
    /^standard input \("-"\) can be read only once: it is named 2 times$/,
  );
});

Deno.test("readTraces() reports lines and bytes read of the total", async () => {
  await using dir = await tempDir();
  const a = `${dir.path}/a.jsonl`, b = `${dir.path}/b.csv`;
  const lines = Array.from(
    { length: 5000 },
    (_, i) => `{"text": "text number ${i}", "answers": {"q": "${i % 3}"}}`,
  ).join("\n") + "\n";
  const csv = "text,q\n" +
    Array.from({ length: 3000 }, (_, i) => `row ${i},${i % 3}`).join("\n");
  await Deno.writeTextFile(a, lines);
  await Deno.writeTextFile(b, csv);
  const total = (await Deno.stat(a)).size + (await Deno.stat(b)).size;
  const seen: ReadProgress[] = [];
  const set = await readTraces([a, b], { progress: (p) => seen.push(p) });
  assert.equal(set.texts.length, 8000);
  assert.ok(seen.length >= 3, `${seen.length} reports`);
  for (let i = 1; i < seen.length; i++) {
    assert.ok(seen[i]!.lines >= seen[i - 1]!.lines);
    assert.ok(seen[i]!.bytes >= seen[i - 1]!.bytes);
  }
  const last = seen[seen.length - 1]!;
  assert.deepEqual(last, {
    source: b,
    lines: 5000 + 3001,
    bytes: total,
    totalBytes: total,
    traces: 8000,
    distinctTexts: 8000,
  });
  // From stdin the total is unknown.
  const fromStdin: ReadProgress[] = [];
  await readTraces(["-"], {
    stdin: streamOf(lines, 4096),
    progress: (p) => fromStdin.push(p),
  });
  assert.equal(fromStdin[fromStdin.length - 1]!.totalBytes, null);
  assert.equal(fromStdin[fromStdin.length - 1]!.bytes, lines.length);
});

Deno.test("readTraces() stops, naming source and line, before the traces outgrow the memory allowed", async () => {
  const lines = Array.from(
    { length: 20000 },
    (_, i) =>
      `{"text": "distinct text ${i} ${
        "x".repeat(100)
      }", "answers": {"q": "a"}}`,
  ).join("\n");
  const MB = 1024 * 1024;
  // A 100 MiB old generation (196 MiB with the young one): the traces may hold 50 MiB.
  const small = { used: 10 * MB, limit: 196 * MB };
  const calm = await readTraces(["-"], {
    stdin: streamOf(lines, 65536),
    heap: () => small,
  });
  assert.equal(calm.texts.length, 20000);
  // A 3 MiB old generation, at the floor of a quarter of the limit: they may hold 1.5 MiB.
  const tiny = { used: 1 * MB, limit: 12 * MB };
  const e = await rejectsWith(
    readTraces(["-"], { stdin: streamOf(lines, 65536), heap: () => tiny }),
    RangeError,
    /^stdin: stopped at line (\d+): the (\d+) distinct texts read so far take about 2 MB, more than 50% of the 3 MB this process may use \(training needs the rest\); split the traces into smaller files, or give the process more memory: deno run --v8-flags=--max-old-space-size=6 \(MB\) \.\.\.$/,
  );
  const line = Number(/line (\d+)/.exec(e.message)![1]);
  assert.ok(line > 1000 && line < 20000, `stopped at line ${line}`);
  // CSV records are watched too.
  const csv = "text,q\n" +
    Array.from(
      { length: 20000 },
      (_, i) => `distinct text ${i} ${"x".repeat(100)},a`,
    )
      .join("\n");
  await rejectsWith(
    readTraces(["-"], { stdin: streamOf(csv, 65536), heap: () => tiny }),
    RangeError,
    /^stdin: stopped at line \d+: the \d+ distinct texts read so far take about 2 MB/,
  );
  // A heap nearly full stops reading whatever the traces hold.
  const full = { used: 95 * MB, limit: 196 * MB };
  await rejectsWith(
    readTraces(["-"], { stdin: streamOf(lines, 65536), heap: () => full }),
    RangeError,
    /^stdin: stopped at line \d+: the heap holds 95 MB of the 100 MB this process may use/,
  );
});

Deno.test("readTraces() sniffs stdin: JSON Lines, a JSON array, CSV or TSV", async () => {
  const sets = await Promise.all([
    readTraces(["-"], {
      stdin: streamOf(`\n  {"text": "a", "answers": {"q": "x"}}`, 5),
    }),
    readTraces(["-"], {
      stdin: streamOf(` [{"text": "a", "answers": {"q": "x"}}]`, 5),
    }),
    readTraces(["-"], { stdin: streamOf(`text,q\na,x\n`, 2) }),
    readTraces(["-"], { stdin: streamOf(`text\tq\na,b\tx\n`, 2) }),
  ]);
  for (const set of sets.slice(0, 3)) {
    assert.deepEqual(set.texts, ["a"]);
    assert.deepEqual(set.questions[0]!.options, ["x"]);
  }
  assert.deepEqual(sets[3]!.texts, ["a,b"]);
});

Deno.test("readTraces() refuses a JSON array of something else than traces, naming the element", async () => {
  await using dir = await tempDir();
  const file = `${dir.path}/intents.json`;
  await Deno.writeTextFile(
    file,
    `[\n  {"text": "a", "answers": {"q": "x"}},\n  {\n    "text": "b",\n    "intents": ["x", "y"]\n  }\n]`,
  );
  await rejectsWith(
    readTraces([file]),
    SyntaxError,
    new RegExp(
      `^${file}:3: element 2: "answers" must be an object of question to option, true or false \\(this trace has "text", "intents"; name top-level answer fields with --answer-columns\\)$`,
    ),
  );
  const numbers = `${dir.path}/numbers.json`;
  await Deno.writeTextFile(numbers, `[1, 2]`);
  await rejectsWith(
    readTraces([numbers]),
    SyntaxError,
    /numbers\.json:1: element 1: a trace must be a JSON object with "text" and "answers" \(got a number\)$/,
  );
});

const NLUPP = `${SHARED_DATA}/nlupp/banking/fold0.json`;
const hasNlupp = await exists(NLUPP);
if (!hasNlupp) console.log(`skipping the NLU++ array test: ${NLUPP} is absent`);

Deno.test({
  name: "readTraces() explains why NLU++'s own file is not a trace file",
  ignore: !hasNlupp,
  async fn() {
    await rejectsWith(
      readTraces([NLUPP]),
      SyntaxError,
      /fold0\.json:2: element 1: "answers" must be an object .*"text", "intents"/,
    );
  },
});
