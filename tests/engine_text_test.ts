import assert from "node:assert/strict";
import {
  normalizeText,
  segmentWords,
  stateText,
  textKey,
  wordsOf,
} from "../src/engine/text.ts";
import { pick, randInt, rng } from "./_fixtures.ts";

const segmenter = new Intl.Segmenter("und", { granularity: "word" });

/** UAX #29 word segmentation by `Intl.Segmenter` alone (as the engine's is set up), to check its fast path against. */
function segmentWordsSlow(text: string): string[] {
  const out: string[] = [];
  for (const s of segmenter.segment(text)) {
    if (s.isWordLike) out.push(s.segment);
  }
  return out;
}

/** Characters the ASCII property test draws from, weighted towards the tricky ones. */
const PIECES = [
  ..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
  ..."0123456789",
  ..."0123456789",
  ..."'.,;:_- ",
  ..."'.,;:_- ",
  ..."'.,;:_- ",
  ...'\t\n\r!?"#$%&()*+/<=>@[\\]^`{|}~',
];

function randomAscii(random: () => number): string {
  const n = randInt(random, 24);
  let s = "";
  for (let i = 0; i < n; i++) s += pick(random, PIECES);
  return s;
}

Deno.test("segmentWords() agrees with Intl.Segmenter on random ASCII strings", () => {
  const random = rng(2024);
  const mismatches: string[] = [];
  for (let i = 0; i < 20_000; i++) {
    const s = randomAscii(random);
    const fast = segmentWords(s);
    const slow = segmentWordsSlow(s);
    if (JSON.stringify(fast) !== JSON.stringify(slow)) {
      mismatches.push(JSON.stringify(s));
    }
  }
  assert.deepEqual(
    mismatches.slice(0, 10),
    [],
    `${mismatches.length} mismatches`,
  );
});

Deno.test("segmentWords() agrees with Intl.Segmenter on hand-picked ASCII edge cases", () => {
  const cases = [
    "don't",
    "e.g.",
    "a.b",
    "a:b",
    "1.5",
    "1,000.25",
    "3;4",
    "a1b2",
    "1a",
    "a_b",
    "_",
    "__",
    "_1",
    "a__",
    "'a'",
    "a''b",
    "1..2",
    "x.1",
    "1.x",
    "a-b",
    " - ",
    "ab.cd.ef",
    "12'34",
    "a'1",
    "1'a",
    "",
  ];
  for (const s of cases) {
    assert.deepEqual(segmentWords(s), segmentWordsSlow(s), JSON.stringify(s));
  }
});

Deno.test("segmentWords() uses the Unicode segmenter for non-ASCII text", () => {
  const cases = [
    "café au lait",
    "naïve co-operation",
    "東京都に住んでいます",
    "Привет, мир",
    "emoji 👍 ok",
    "ｆｕｌｌ width",
  ];
  for (const s of cases) {
    assert.deepEqual(segmentWords(s), segmentWordsSlow(s), s);
  }
  assert.deepEqual(segmentWords("café au lait"), ["café", "au", "lait"]);
  // Japanese has no spaces: the segmenter still finds several words.
  assert.ok(segmentWords("東京都に住んでいます").length > 1);
});

Deno.test("normalizeText() applies NFKC and lower case", () => {
  assert.equal(normalizeText("ＨＥＬＬＯ ﬁle"), "hello file");
  assert.equal(textKey("  Hello \t\n World "), "hello world");
});

Deno.test("stateText() keeps strings and serialises objects with JSON.stringify", () => {
  assert.equal(stateText("plain"), "plain");
  const o = { user: "Ann", items: [1, 2], nested: { ok: true } };
  assert.equal(stateText(o), JSON.stringify(o));
});

Deno.test("wordsOf() equals segmentWords(normalizeText()) on ASCII and other texts", () => {
  for (
    const text of [
      "I am STILL waiting on my card?",
      "Can't top-up: 3.5 EUR, u.s. card_number",
      "Ｆｕｌｌ ｗｉｄｔｈ ﬁ ligature",
      "où est ma carte? 我的卡在哪里",
      "",
    ]
  ) {
    assert.deepEqual(wordsOf(text), segmentWords(normalizeText(text)), text);
  }
});
