import assert from "node:assert/strict";
import { parseTraceText, typeAnswers } from "../src/traces/mod.ts";
import { throwsWith } from "./_fixtures.ts";

Deno.test("typeAnswers() makes yes/no of one boolean spelling family, a choice of anything else", () => {
  const yesNo = [
    ["true", "false"],
    ["True", "False"],
    ["TRUE", "FALSE"],
    ["True", "false", "TRUE"],
    ["false"],
    ["1", "0"],
    ["0"],
    ["t", "f"],
    ["T", "F"],
  ];
  for (const distinct of yesNo) {
    const typed = typeAnswers(distinct);
    assert.equal(typed.kind, "yes_no", distinct.join(","));
    assert.deepEqual(typed.options, ["true", "false"]);
    distinct.forEach((d, i) =>
      assert.equal(
        typed.options[typed.index[i]!],
        ["true", "1", "t"].includes(d.toLowerCase()) ? "true" : "false",
        d,
      )
    );
  }
  const choice = [
    ["yes", "no"],
    ["1", "0", "2"],
    ["true", "1"],
    ["True", "0"],
    ["t", "false"],
    ["truee", "false"],
    ["on", "off"],
  ];
  for (const distinct of choice) {
    const typed = typeAnswers(distinct);
    assert.equal(typed.kind, "choice", distinct.join(","));
    assert.deepEqual(typed.options, distinct);
  }
});

Deno.test("parseTraceText() reads a pandas CSV: the unnamed index column is ignored with a note, True/False is yes/no", () => {
  // What pandas' DataFrame.to_csv() writes by default.
  const csv = [
    ",text,wants_human,topic",
    "0,let me talk to a person,True,support",
    "1,where is my parcel,False,shipping",
    "2,agent please,True,support",
  ].join("\n");
  const notes: string[] = [];
  const set = parseTraceText("pandas.csv", csv, {
    note: (line) => notes.push(line),
  });
  assert.deepEqual(set.texts, [
    "let me talk to a person",
    "where is my parcel",
    "agent please",
  ]);
  assert.deepEqual(set.questions.map((q) => [q.name, q.kind]), [
    ["wants_human", "yes_no"],
    ["topic", "choice"],
  ]);
  assert.deepEqual([...set.questions[0]!.labels], [0, 1, 0]);
  assert.deepEqual(notes, [
    "pandas.csv: column 1 has no name: ignored (an index column, as pandas writes)",
  ]);
  // Written again after a read without index_col, pandas names it "Unnamed: 0".
  const again = parseTraceText(
    "again.csv",
    csv.replace(/^,/, "Unnamed: 0,"),
    { note: (line) => notes.push(line) },
  );
  assert.deepEqual(again.questions.map((q) => q.name), [
    "wants_human",
    "topic",
  ]);
  assert.match(notes[1]!, /^again\.csv: column 1 is "Unnamed: 0": ignored/);
});

Deno.test("parseTraceText() makes 1/0 cells yes/no only when the column holds nothing else", () => {
  const set = parseTraceText(
    "d.csv",
    "text,flag,stars\na,1,1\nb,0,0\nc,1,2\nd,,1\n",
  );
  const flag = set.questions.find((q) => q.name === "flag")!;
  const stars = set.questions.find((q) => q.name === "stars")!;
  assert.equal(flag.kind, "yes_no");
  assert.deepEqual([...flag.labels], [0, 1, 0, -1]);
  assert.equal(stars.kind, "choice");
  assert.deepEqual(stars.options, ["1", "0", "2"]);
});

Deno.test("parseTraceText() types JSON answers like cells: booleans and their spellings make yes/no", () => {
  const set = parseTraceText(
    "t.jsonl",
    [
      `{"text": "a", "answers": {"human": true, "said": "yes"}}`,
      `{"text": "b", "answers": {"human": "False", "said": "no"}}`,
    ].join("\n"),
  );
  assert.deepEqual(set.questions.map((q) => [q.name, q.kind]), [
    ["human", "yes_no"],
    ["said", "choice"],
  ]);
  assert.deepEqual([...set.questions[0]!.labels], [0, 1]);
});

Deno.test("parseTraceText() reads the text column --text-column names, in CSV and JSON", () => {
  const csv = parseTraceText(
    "d.csv",
    "message,category\nhello,greet\nbye,leave\n",
    { textColumn: "message" },
  );
  assert.deepEqual(csv.texts, ["hello", "bye"]);
  assert.deepEqual(csv.questions.map((q) => q.name), ["category"]);
  const json = parseTraceText(
    "d.jsonl",
    `{"prompt": "hello", "answers": {"category": "greet"}}\n`,
    { textColumn: "prompt" },
  );
  assert.deepEqual(json.texts, ["hello"]);
  throwsWith(
    () =>
      parseTraceText("d.csv", "text,category\nhello,greet\n", {
        textColumn: "message",
      }),
    SyntaxError,
    /^d\.csv:1: the header has no "message" column \(columns: "text", "category"\); the column --text-column names$/,
  );
  throwsWith(
    () =>
      parseTraceText("d.jsonl", `{"text": "hello", "answers": {"c": "g"}}\n`, {
        textColumn: "prompt",
      }),
    SyntaxError,
    /^d\.jsonl:1: the trace has no "prompt" field \(it has "text", "answers"\); name the field that holds the text with --text-column NAME$/,
  );
});

Deno.test("parseTraceText() reads only the answer columns named, in CSV and JSON", () => {
  const csv = parseTraceText(
    "d.csv",
    "text,id,category,urgent\nhello,17,greet,false\nbye,18,leave,true\n",
    { answerColumns: ["category", "urgent"] },
  );
  assert.deepEqual(csv.questions.map((q) => q.name), ["category", "urgent"]);
  const json = parseTraceText(
    "d.jsonl",
    `{"text": "hello", "answers": {"id": "17", "category": "greet"}}\n`,
    { answerColumns: ["category"] },
  );
  assert.deepEqual(json.questions.map((q) => q.name), ["category"]);
  // JSON traces without "answers" are flat records: the named fields are their answers.
  const flat = parseTraceText(
    "flat.jsonl",
    `{"text": "hello", "category": "greet", "id": 17}\n{"text": "bye", "category": "leave"}\n`,
    { answerColumns: ["category"] },
  );
  assert.deepEqual(flat.questions.map((q) => [q.name, q.options]), [
    ["category", ["greet", "leave"]],
  ]);
});

Deno.test("parseTraceText() refuses answer columns that are missing, unanswered, or not answers", () => {
  throwsWith(
    () =>
      parseTraceText("d.csv", "text,category\nhello,greet\n", {
        answerColumns: ["intent"],
      }),
    SyntaxError,
    /^d\.csv:1: the header has no "intent" column \(columns: "text", "category"\)$/,
  );
  throwsWith(
    () =>
      parseTraceText("d.csv", "text,category,intent\nhello,greet,\n", {
        answerColumns: ["category", "intent"],
      }),
    RangeError,
    /^d\.csv: no trace answers "intent", named as an answer column$/,
  );
  for (const name of ["text", "time", "group"]) {
    throwsWith(
      () =>
        parseTraceText("d.csv", "text,category\nhello,greet\n", {
          answerColumns: [name],
        }),
      RangeError,
      new RegExp(`^"${name}" is the ${name} column, not an answer column$`),
    );
  }
  throwsWith(
    () =>
      parseTraceText("d.jsonl", `{"text": "a", "answers": {"c": "x"}}\n`, {
        answerColumns: ["c", "c"],
      }),
    RangeError,
    /^answer column "c" is named twice$/,
  );
});

Deno.test("parseTraceText() reads TSV by name, keeping quotes inside fields", () => {
  const tsv = 'text\tcategory\r\nhe said "hi"\tgreet\r\n"a\ttab"\tleave\r\n';
  const set = parseTraceText("d.TSV", tsv);
  assert.deepEqual(set.texts, ['he said "hi"', "a\ttab"]);
  assert.deepEqual(set.questions[0]!.options, ["greet", "leave"]);
  // Read as CSV (by its name), the same text is one column.
  throwsWith(
    () => parseTraceText("d.csv", tsv),
    SyntaxError,
    /^d\.csv:1: the header has no "text" column \(columns: "text\\tcategory"\); name the column that holds the text with --text-column NAME$/,
  );
});

Deno.test("parseTraceText() names the line a multi-line CSV record starts on", () => {
  const csv = 'text,q,time\n"two\nlines",x,\n\n"three\n\nlines",y,never\n';
  throwsWith(
    () => parseTraceText("d.csv", csv),
    SyntaxError,
    /^d\.csv:5: time "never" is not ISO 8601/,
  );
});
