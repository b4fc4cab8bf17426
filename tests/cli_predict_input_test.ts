/**
 * `predict` reads the files it is given (as fastText's `predict` does) and
 * CSV or TSV by column: a header naming the text column is read as such,
 * never answered as a text.
 */

import assert from "node:assert/strict";
import { csvHeaderOf, modeOfName } from "../src/cli/predict_input.ts";
import { tempDir } from "./_fixtures.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const BUNDLE = new URL("../demo/bundle", import.meta.url).pathname;

async function predict(args: string[], input = "") {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--quiet",
      MAIN,
      "predict",
      "--bundle",
      BUNDLE,
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
  const stdout = new TextDecoder().decode(out.stdout);
  return {
    code: out.code,
    lines: stdout.trimEnd().split("\n").filter((l) => l !== "").map((l) =>
      JSON.parse(l)
    ),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

const TEXTS = [
  "where is my parcel, it has not arrived yet",
  "I want my money back for the shoes",
];

Deno.test("csvHeaderOf() takes a header of names naming the text column, not a sentence", () => {
  assert.equal(csvHeaderOf("text,label", "text"), "csv");
  assert.equal(csvHeaderOf('"Text","intent"', "text"), "csv");
  assert.equal(csvHeaderOf("id\ttext", "text"), "tsv");
  assert.equal(csvHeaderOf("utterance,label", "text"), null);
  assert.equal(csvHeaderOf("utterance,label", "utterance"), "csv");
  assert.equal(csvHeaderOf("text, please help", "text"), null);
  assert.equal(csvHeaderOf("where is my parcel, it is late", "text"), null);
  assert.equal(modeOfName("in.CSV"), "csv");
  assert.equal(modeOfName("in.log"), null);
});

Deno.test("predict FILE reads the files named, one after the other, as standard input would be", async () => {
  await using tmp = await tempDir();
  await Deno.writeTextFile(`${tmp.path}/a.txt`, `${TEXTS[0]}\n`);
  await Deno.writeTextFile(`${tmp.path}/b.txt`, `${TEXTS[1]}\n`);
  const fromFiles = await predict([`${tmp.path}/a.txt`, `${tmp.path}/b.txt`]);
  assert.equal(fromFiles.code, 0, fromFiles.stderr);
  const fromStdin = await predict([], TEXTS.join("\n") + "\n");
  assert.deepEqual(fromFiles.lines, fromStdin.lines);
  assert.equal(fromFiles.lines.length, 2);
  const missing = await predict([`${tmp.path}/none.txt`]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /cannot read .*none\.txt/);
});

Deno.test("predict reads CSV by its text column: the header is not a text, a quoted comma stays in its text", async () => {
  const csv = `text,label\n"${TEXTS[0]}",delivery\n"${TEXTS[1]}",returns\n`;
  const piped = await predict([], csv);
  assert.equal(piped.code, 0, piped.stderr);
  assert.match(piped.stderr, /reading CSV \(its header: text,label\)/);
  assert.equal(
    piped.lines.length,
    2,
    "one line per record, none for the header",
  );
  const plain = await predict([], TEXTS.join("\n") + "\n");
  assert.deepEqual(piped.lines, plain.lines);
  // A named column, a file by its name, an id echoed.
  await using tmp = await tempDir();
  const file = `${tmp.path}/in.csv`;
  await Deno.writeTextFile(
    file,
    `id,utterance\n7,"${TEXTS[0]}"\n8,"${TEXTS[1]}"\n`,
  );
  const named = await predict([file, "--text-column", "utterance"]);
  assert.equal(named.code, 0, named.stderr);
  assert.deepEqual(named.lines.map((l) => l.id), ["7", "8"]);
  assert.deepEqual(
    named.lines.map((l) => l.answers),
    plain.lines.map((l) => l.answers),
  );
  const wrong = await predict([file]);
  assert.equal(wrong.code, 2);
  assert.match(
    wrong.stderr,
    /has no column "text" \(its columns: "id", "utterance"\)/,
  );
});
