import assert from "node:assert/strict";
import {
  bucketKind,
  capWord,
  DEFAULT_FEATURIZER,
  type FeaturizerSettings,
  textWords,
  wordBucketsOf,
} from "../src/engine/features.ts";
import { prepareText } from "../src/engine/prepare.ts";
import { smallTable, stateOf } from "./_fixtures.ts";
import { scoreText, softmax } from "../src/engine/score.ts";

const S: FeaturizerSettings = { ...DEFAULT_FEATURIZER, buckets_log2: 16 };

/** A text's words, their buckets and its bigrams, as training and serving find them. */
function featuresOf(text: string, settings: FeaturizerSettings) {
  const { words, bigramBuckets } = textWords(text, settings);
  return {
    words,
    wordBuckets: words.map((w) => wordBucketsOf(w, settings)),
    bigramBuckets,
    empty: words.length === 0,
  };
}

function signature(text: string, settings = S): string {
  const f = featuresOf(text, settings);
  return JSON.stringify({
    words: f.words,
    w: f.wordBuckets.map((b) => [...b]),
    b: [...f.bigramBuckets].sort(),
  });
}

Deno.test("textWords() folds case, NFKC forms and repeated words", () => {
  assert.equal(
    signature("Where is my PARCEL"),
    signature("where is my parcel"),
  );
  assert.equal(
    signature("ｗｈｅｒｅ is my ﬁle"),
    signature("where is my file"),
  );
  assert.equal(
    signature("where  is\tmy parcel!"),
    signature("where is my parcel"),
  );
  const f = featuresOf("refund refund refund please", S);
  assert.deepEqual(f.words, ["refund", "please"]);
  // "refund refund" is one distinct bigram, "refund please" another.
  assert.equal(f.bigramBuckets.length, 2);
  assert.notEqual(
    signature("parcel where"),
    signature("where parcel"),
    "bigrams keep word order",
  );
});

Deno.test("textWords() caps long words and never splits a surrogate pair", () => {
  const long = "a".repeat(50);
  const f = featuresOf(`${long} b`, S);
  assert.equal(f.words[0], "a".repeat(S.max_word_length));
  assert.equal(
    signature(`${long} b`),
    signature(`${"a".repeat(60)} b`),
    "only the first characters count",
  );
  // 19 letters then an emoji (two code units): the cap falls inside the pair and backs off.
  const word = "b".repeat(19) + "😀";
  assert.equal(capWord(word, 20), "b".repeat(19));
  assert.equal(capWord("short", 20), "short");
});

Deno.test("textWords() and wordBucketsOf() put words, n-grams and bigrams in their own bucket ranges", () => {
  const f = featuresOf("where is my parcel today", S);
  for (const buckets of f.wordBuckets) {
    assert.equal(bucketKind(buckets[0]!, S), "word");
    for (const b of buckets.slice(1)) {
      assert.equal(bucketKind(b, S), "ngram");
    }
    assert.equal(new Set(buckets).size, buckets.length, "distinct buckets");
  }
  for (const b of f.bigramBuckets) assert.equal(bucketKind(b, S), "bigram");
  assert.ok(
    f.wordBuckets.every((b) =>
      b.every((x) => x >= 0 && x < 1 << S.buckets_log2)
    ),
  );
  // Character n-grams off: one bucket per word. Bigrams off: none.
  const plain = featuresOf("where is my parcel", {
    ...S,
    char_ngram_max: 0,
    bigrams: false,
  });
  assert.ok(plain.wordBuckets.every((b) => b.length === 1));
  assert.equal(plain.bigramBuckets.length, 0);
  assert.equal(featuresOf(" ?! ", S).empty, true);
  assert.equal(featuresOf("a", S).empty, false);
});

Deno.test("scoreText() scores feature presence: repeating words changes nothing", () => {
  const { table } = smallTable();
  const q = table.byName.get("topic")!;
  const once = scoreText(
    table,
    q,
    prepareText(table, stateOf(table), "refund please").features,
  );
  const again = scoreText(
    table,
    q,
    prepareText(table, stateOf(table), "REFUND please refund please").features,
  );
  // "please refund" adds one bigram; the rest is present once either way.
  const twice = scoreText(
    table,
    q,
    prepareText(
      table,
      stateOf(table),
      "refund please refund please refund please",
    ).features,
  );
  assert.deepEqual(again, twice);
  assert.notDeepEqual(once, again);
  const p = softmax(once, q.temperature);
  assert.ok(Math.abs(p.reduce((s, x) => s + x, 0) - 1) < 1e-12);
});
