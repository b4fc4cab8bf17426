/**
 * Bounds on what reading traces holds and says: a line (JSON Lines), an
 * element (JSON array) or a record (CSV) over `MAX_TRACE_LINE_CHARS` is
 * refused with its file and line before it is held whole, and every read
 * error is a few hundred characters at most, however large what it quotes.
 * Also: a feedback line naming an audit already read is left out.
 */

import assert from "node:assert/strict";
import { readTraces } from "../src/traces/mod.ts";
import { LineSplitter, MAX_TRACE_LINE_CHARS } from "../src/traces/_lines.ts";
import { MAX_ERROR_CHARS } from "../src/traces/read.ts";
import { columnList } from "../src/traces/csv.ts";
import { tempDir } from "./_fixtures.ts";

const OK = `{"text": "ok", "answers": {"topic": "a"}}\n`;

/** A gzip member of `head`, then `n` times "a", then `tail`, compressed as it streams. */
async function gzipped(head: string, n: number, tail: string) {
  const chunk = new TextEncoder().encode("a".repeat(1 << 20));
  let left = n;
  let started = false;
  const source = new ReadableStream<BufferSource>({
    pull(c) {
      if (!started) {
        started = true;
        c.enqueue(new TextEncoder().encode(head));
      } else if (left > 0) {
        const k = Math.min(left, chunk.length);
        c.enqueue(chunk.subarray(0, k));
        left -= k;
      } else {
        c.enqueue(new TextEncoder().encode(tail));
        c.close();
      }
    },
  });
  return new Uint8Array(
    await new Response(source.pipeThrough(new CompressionStream("gzip")))
      .arrayBuffer(),
  );
}

async function readError(path: string): Promise<string> {
  try {
    await readTraces([path]);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error(`${path} was read`);
}

Deno.test("LineSplitter refuses a line over its bound as soon as it is longer, naming its number", () => {
  const s = new LineSplitter(10);
  const lines: string[] = [];
  s.push("short\r\nalso short\n", (l) => lines.push(l));
  assert.deepEqual(lines, ["short", "also short"]);
  s.push("0123456", (l) => lines.push(l));
  assert.throws(
    () => s.push("78901", (l) => lines.push(l)),
    /^RangeError: line 3: the line is longer than 10 characters/,
  );
});

Deno.test("a gzip member inflating to one line over the bound is refused with its file and line, in a short message", async (t) => {
  await using dir = await tempDir();
  const n = MAX_TRACE_LINE_CHARS + 1024;
  const cases: [string, string, string, RegExp][] = [
    [
      "huge.jsonl.gz",
      `${OK}{"text": "`,
      `"}\n`,
      /huge\.jsonl\.gz:2: the line is longer than 16,777,216 characters/,
    ],
    [
      "huge.json.gz",
      `[${OK},\n{"text": "`,
      `"}]`,
      /huge\.json\.gz:3: element 2: the element is longer than 16,777,216 characters/,
    ],
    [
      "huge.csv.gz",
      "text,topic\nok,a\n",
      ",b\n",
      /huge\.csv\.gz:3: not valid CSV \(Max Record Size/,
    ],
  ];
  for (const [name, head, tail, pattern] of cases) {
    await t.step(name, async () => {
      const path = `${dir.path}/${name}`;
      await Deno.writeFile(path, await gzipped(head, n, tail));
      const message = await readError(path);
      assert.match(message, pattern);
      assert.ok(message.length <= MAX_ERROR_CHARS, message);
    });
  }
});

Deno.test("a CSV header of 100,000 columns gives a short message naming the count", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/wide.csv`;
  const names = Array.from({ length: 100_000 }, (_, i) => `column_${i}`);
  await Deno.writeTextFile(path, `${names.join(",")}\n${names.join(",")}\n`);
  const message = await readError(path);
  assert.match(message, /has no "text" column/);
  assert.match(message, /and 99,992 more: 100,000 columns\)/);
  assert.ok(message.length <= 300, `${message.length} characters`);
  assert.equal(columnList(["a", "b"]), '"a", "b"');
});

Deno.test("an error quoting a huge value is cut to a few hundred characters", async (t) => {
  await using dir = await tempDir();
  const big = "x".repeat(1_000_000);
  const cases: [string, string][] = [
    [
      "feedback",
      `{"text": "a", "answers": {"t": "b"}, "feedback": "${big}"}\n`,
    ],
    ["group", `{"text": "a", "answers": {"t": "b"}, "group": ["${big}"]}\n`],
    ["answers hint", `{"text": "a", "${big}": 1}\n`],
    ["kinds across files", `{"text": "a", "answers": {"${big}": "b"}}\n`],
  ];
  for (const [name, text] of cases) {
    await t.step(name, async () => {
      const path = `${dir.path}/bad.jsonl`;
      await Deno.writeTextFile(path, text);
      const first = `${dir.path}/first.jsonl`;
      await Deno.writeTextFile(
        first,
        `{"text": "a", "answers": {"${big}": true}}\n`,
      );
      let message = "";
      try {
        await readTraces(
          name === "kinds across files" ? [first, path] : [path],
        );
      } catch (e) {
        message = (e as Error).message;
      }
      assert.ok(message !== "", "an error");
      assert.ok(
        message.length <= MAX_ERROR_CHARS,
        `${message.length}: ${message.slice(0, 200)}`,
      );
      assert.ok(!message.includes("\n"));
    });
  }
});

Deno.test("readTraces keeps the first feedback line of an audit across files and notes how many it left out", async () => {
  await using dir = await tempDir();
  const line = (text: string, audit: string) =>
    JSON.stringify({
      text,
      answers: { topic: "a" },
      feedback: { source: "audit", audit, bundle: "b" },
    }) + "\n";
  const a = `${dir.path}/r1.jsonl`;
  const b = `${dir.path}/r2.jsonl`;
  await Deno.writeTextFile(a, line("first", "0011") + line("other", "2233"));
  await Deno.writeTextFile(b, line("second", "0011") + OK);
  const notes: string[] = [];
  const set = await readTraces([a, b], { note: (n) => notes.push(n) });
  assert.deepEqual(set.texts, ["first", "other", "ok"]);
  assert.equal(notes.length, 1);
  assert.match(
    notes[0]!,
    /^left out 1 feedback line\(s\) of audits already read/,
  );
  await Deno.writeTextFile(
    b,
    JSON.stringify({
      text: "x",
      answers: { topic: "a" },
      feedback: { source: "audit", audit: 5 },
    }) + "\n",
  );
  await assert.rejects(
    readTraces([b]),
    /r2\.jsonl:1: "feedback"\."audit" must be a string/,
  );
});
