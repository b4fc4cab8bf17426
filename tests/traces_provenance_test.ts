import assert from "node:assert/strict";
import { parseIsoTime, parseTraceText } from "../src/traces/mod.ts";
import { throwsWith } from "./_fixtures.ts";

const seconds = (iso: string) => {
  const r = parseIsoTime(iso);
  assert.ok("seconds" in r, `${iso}: ${JSON.stringify(r)}`);
  return r.seconds;
};

Deno.test("parseIsoTime() reads ISO 8601 dates, times, fractions and zone offsets", () => {
  const noon = Date.UTC(2024, 4, 1, 12, 30, 0) / 1000;
  assert.equal(seconds("2024-05-01T12:30:00Z"), noon);
  assert.equal(seconds("2024-05-01t12:30:00z"), noon);
  assert.equal(seconds("2024-05-01 12:30:00Z"), noon);
  assert.equal(seconds("2024-05-01T12:30Z"), noon);
  assert.equal(seconds("2024-05-01T14:30:00+02:00"), noon);
  assert.equal(seconds("2024-05-01T14:30:00+0200"), noon);
  assert.equal(seconds("2024-05-01T14:30:00+02"), noon);
  assert.equal(seconds("2024-05-01T04:30:00-08:00"), noon);
  assert.equal(seconds("2024-05-01T12:30:00.250Z"), noon + 0.25);
  assert.equal(seconds("2024-05-01T12:30:00,5Z"), noon + 0.5);
  assert.equal(seconds("2024-05-01"), Date.UTC(2024, 4, 1) / 1000);
  assert.equal(seconds("2024-02-29T00:00:00Z"), Date.UTC(2024, 1, 29) / 1000);
  // Years below 100 are years, not 1900 + n.
  const d = new Date(seconds("0050-01-01") * 1000);
  assert.equal(d.getUTCFullYear(), 50);
});

Deno.test("parseIsoTime() refuses what Date.parse would guess at", () => {
  for (
    const text of [
      "May 1, 2024",
      "2024/05/01",
      "2024-5-1",
      "1 May 2024 12:30 GMT",
      "20240501T123000Z",
      "2024-05-01Z",
      "2024-05-01T12",
      "2024-05-01T12:30:00 Z",
      "2024-05-01T12:30:00+2:00",
      " 2024-05-01",
    ]
  ) {
    const r = parseIsoTime(text);
    assert.ok("reason" in r, text);
    assert.match(r.reason, /is not ISO 8601/, text);
  }
  // Date.parse accepts several of them: strictness is ours.
  assert.ok(!Number.isNaN(Date.parse("May 1, 2024")));
  assert.ok(!Number.isNaN(Date.parse("2024/05/01")));
  const impossible: [string, RegExp][] = [
    ["2024-02-30", /no such day/],
    ["2023-02-29", /no such day/],
    ["2024-04-31", /no such day/],
    ["2024-13-01", /no such month/],
    ["2024-00-10", /no such month/],
    ["2024-05-01T24:00:00Z", /no such time of day/],
    ["2024-05-01T12:60:00Z", /no such time of day/],
    ["2024-05-01T12:00:00+24:00", /no such zone offset/],
  ];
  for (const [text, pattern] of impossible) {
    const r = parseIsoTime(text);
    assert.ok("reason" in r, text);
    assert.match(r.reason, pattern, text);
  }
});

Deno.test("a time without a zone is UTC whatever the machine's time zone", async () => {
  const code = `
    import { parseTraceText } from ${
    JSON.stringify(new URL("../src/traces/mod.ts", import.meta.url).href)
  };
    const set = parseTraceText("t.jsonl",
      '{"text": "a", "answers": {"q": "x"}, "time": "2024-05-01T12:30:00"}\\n' +
      '{"text": "b", "answers": {"q": "y"}, "time": "2024-05-01 12:30"}\\n');
    console.log(JSON.stringify([...set.times]));`;
  for (const tz of ["Asia/Kolkata", "America/New_York"]) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["eval", "--quiet", code],
      env: { TZ: tz },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = new TextDecoder();
    assert.equal(out.code, 0, dec.decode(out.stderr));
    const noon = Date.UTC(2024, 4, 1, 12, 30) / 1000;
    assert.deepEqual(JSON.parse(dec.decode(out.stdout)), [noon, noon], tz);
  }
});

Deno.test("parseTraceText() reads time and group from JSON Lines", () => {
  const set = parseTraceText(
    "t.jsonl",
    [
      `{"text": "a", "answers": {"q": "x"}, "time": "2024-05-01T00:00:00Z", "group": "user-1"}`,
      `{"text": "b", "answers": {"q": "y"}, "time": 1714521600.5, "group": 42}`,
      `{"text": "c", "answers": {"q": "x"}, "time": null, "group": null}`,
      `{"text": "d", "answers": {"q": "y"}, "group": "42"}`,
      `{"text": "e", "answers": {"q": "x"}, "group": "user-1"}`,
    ].join("\n"),
  );
  assert.deepEqual([...set.times!], [
    1714521600,
    1714521600.5,
    NaN,
    NaN,
    NaN,
  ]);
  // An integer group is named by its digits: 42 and "42" are one group.
  assert.deepEqual(set.groupNames, ["user-1", "42"]);
  assert.deepEqual([...set.groups!], [0, 1, -1, 1, 0]);
  // "time" and "group" are never questions.
  assert.deepEqual(set.questions.map((q) => q.name), ["q"]);
});

Deno.test("parseTraceText() leaves times and groups null when no trace has one", () => {
  const set = parseTraceText(
    "t.jsonl",
    `{"text": "a", "answers": {"q": "x"}}\n{"text": "b", "answers": {"q": "y"}}\n`,
  );
  assert.equal(set.times, null);
  assert.equal(set.groups, null);
  assert.deepEqual(set.groupNames, []);
  // One trace with a time: the others are NaN.
  const one = parseTraceText(
    "t.jsonl",
    `{"text": "a", "answers": {"q": "x"}}\n{"text": "b", "answers": {"q": "y"}, "time": 5}\n`,
  );
  assert.deepEqual([...one.times!], [NaN, 5]);
  assert.equal(one.groups, null);
});

Deno.test("parseTraceText() names file and line of a bad time or group in JSON Lines", () => {
  const good = `{"text": "a", "answers": {"q": "x"}}`;
  const cases: [string, RegExp][] = [
    [`"time": "yesterday"`, /^t\.jsonl:2: time "yesterday" is not ISO 8601/],
    [`"time": "2024-02-30"`, /^t\.jsonl:2: time "2024-02-30" has no such day/],
    [
      `"time": "1714521600"`,
      /^t\.jsonl:2: time "1714521600" is a string; seconds since the epoch must be a JSON number$/,
    ],
    [
      `"time": 1714521600000`,
      /^t\.jsonl:2: time 1714521600000 is too large for seconds since the epoch \(milliseconds\? divide by 1000\)$/,
    ],
    [
      `"time": true`,
      /^t\.jsonl:2: "time" must be an ISO 8601 string or seconds/,
    ],
    [`"group": ""`, /^t\.jsonl:2: "group" is an empty string$/],
    [
      `"group": 1.5`,
      /^t\.jsonl:2: "group" must be a non-empty string or an integer: got 1\.5$/,
    ],
    [
      `"group": ["a"]`,
      /^t\.jsonl:2: "group" must be a non-empty string or an integer/,
    ],
  ];
  for (const [field, pattern] of cases) {
    throwsWith(
      () =>
        parseTraceText(
          "t.jsonl",
          `${good}\n{"text": "b", "answers": {"q": "y"}, ${field}}\n`,
        ),
      SyntaxError,
      pattern,
    );
  }
});

Deno.test("parseTraceText() reads time and group columns of a CSV, which are not questions", () => {
  const csv = [
    "group,text,time,topic",
    "alice,hello there,2024-05-01T10:00:00Z,greeting",
    "bob,my card,1714557600,card",
    ",what,,card",
    "alice,bye now,1.7145576E9,greeting",
  ].join("\n");
  const set = parseTraceText("d.csv", csv);
  assert.deepEqual(set.questions.map((q) => q.name), ["topic"]);
  assert.deepEqual(set.texts, ["hello there", "my card", "what", "bye now"]);
  assert.deepEqual([...set.times!], [
    Date.UTC(2024, 4, 1, 10) / 1000,
    1714557600,
    NaN,
    1714557600,
  ]);
  assert.deepEqual(set.groupNames, ["alice", "bob"]);
  assert.deepEqual([...set.groups!], [0, 1, -1, 0]);
});

Deno.test("parseTraceText() names file and line of a bad time cell in a CSV", () => {
  throwsWith(
    () =>
      parseTraceText(
        "d.csv",
        "text,time,q\na,2024-05-01,x\nb,05/01/2024,y\n",
      ),
    SyntaxError,
    /^d\.csv:3: time "05\/01\/2024" is not ISO 8601/,
  );
  throwsWith(
    () => parseTraceText("d.csv", "text,time,q\na,1714521600000,x\n"),
    SyntaxError,
    /^d\.csv:2: time 1714521600000 is too large .*milliseconds/,
  );
});
