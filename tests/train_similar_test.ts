import assert from "node:assert/strict";
import {
  cosine,
  LIST_SCAN_FLOOR,
  LIST_SCAN_LIMIT,
  scanLimitFor,
  SimilarityIndex,
  similarPairs,
  textVectors,
} from "../src/train/similar.ts";
import { FILLER_WORDS, pick, randInt, rng, TOPIC_WORDS } from "./_fixtures.ts";

const WORDS = [...FILLER_WORDS, ...Object.values(TOPIC_WORDS).flat()];

/** Texts with many near-duplicates: mutations of a few hundred bases. */
function texts(seed: number, n: number): string[] {
  const random = rng(seed);
  const bases = Array.from(
    { length: Math.ceil(n / 4) },
    () =>
      Array.from(
        { length: 4 + randInt(random, 10) },
        () => pick(random, WORDS),
      ),
  );
  return Array.from({ length: n }, () => {
    const words = [...pick(random, bases)];
    const edits = randInt(random, 4);
    for (let e = 0; e < edits; e++) {
      words[randInt(random, words.length)] = pick(random, WORDS);
    }
    if (random() < 0.3) words.push(pick(random, WORDS));
    return words.join(" ");
  });
}

Deno.test("textVectors() gives unit vectors whose cosine matches TF-IDF by hand", () => {
  const v = textVectors(["a b", "a c", "a b"]);
  // df: a 3, b 2, c 1; idf = 1 + ln(4 / (1 + df)).
  const idf = (df: number) => 1 + Math.log(4 / (1 + df));
  const ab = [idf(3), idf(2)];
  const ac = [idf(3), idf(1)];
  const norm = (x: number[]) => Math.hypot(...x);
  const want = (ab[0]! * ac[0]!) / (norm(ab) * norm(ac));
  assert.ok(Math.abs(cosine(v, 0, 1) - want) < 1e-6);
  assert.ok(Math.abs(cosine(v, 0, 2) - 1) < 1e-6);
  // An empty text is similar to nothing.
  const e = textVectors(["", "a"]);
  assert.equal(cosine(e, 0, 1), 0);
});

Deno.test("similarPairs() finds exactly the pairs a brute-force search finds", () => {
  for (
    const [seed, threshold] of [[1, 0.5], [2, 0.7], [3, 0.8], [
      4,
      0.95,
    ]] as const
  ) {
    const t = texts(seed, 600);
    const v = textVectors(t);
    const want = new Set<string>();
    for (let i = 0; i < t.length; i++) {
      for (let j = 0; j < i; j++) {
        if (cosine(v, j, i) >= threshold - 1e-6) want.add(`${j},${i}`);
      }
    }
    const got = new Set<string>();
    similarPairs(v, { threshold }, (j, i, c) => {
      assert.ok(j < i && c >= threshold - 1e-6);
      got.add(`${j},${i}`);
    });
    assert.ok(want.size > 40, `seed ${seed}: ${want.size} pairs to find`);
    assert.deepEqual(got, want, `threshold ${threshold}`);
  }
});

Deno.test("similarPairs() matches only indexed earlier texts with probing later ones", () => {
  const t = texts(9, 400);
  const v = textVectors(t);
  const indexed = (i: number) => i < 200;
  const probing = (i: number) => i >= 200;
  const want = new Set<string>();
  for (let i = 200; i < 400; i++) {
    for (let j = 0; j < 200; j++) {
      if (cosine(v, j, i) >= 0.7 - 1e-6) want.add(`${j},${i}`);
    }
  }
  const got = new Set<string>();
  similarPairs(
    v,
    { threshold: 0.7, indexed, probing },
    (j, i) => got.add(`${j},${i}`),
  );
  assert.ok(want.size > 20);
  assert.deepEqual(got, want);
  assert.throws(() => similarPairs(v, { threshold: 0 }, () => {}), RangeError);
});

Deno.test("scanLimitFor() keeps the search exact in practice for small sets and about linear for large ones", () => {
  assert.equal(scanLimitFor(1), LIST_SCAN_LIMIT);
  assert.equal(scanLimitFor(10_000), LIST_SCAN_LIMIT);
  assert.equal(scanLimitFor(100_000), 200);
  assert.equal(scanLimitFor(1_000_000), LIST_SCAN_FLOOR);
  for (const n of [20_000, 50_000, 300_000]) {
    assert.ok(scanLimitFor(n) * n <= 20_000_000 + n);
  }
});

Deno.test("SimilarityIndex.query() stops as soon as found() says it has enough", () => {
  // Equal texts: every one is indexed under every word.
  const texts = Array.from({ length: 4 }, () => "red apple pie");
  const v = textVectors(texts);
  const index = new SimilarityIndex(v, 0.5);
  for (let i = 0; i < 3; i++) index.add(i);
  const all: number[] = [];
  index.query(3, (j) => {
    all.push(j);
  });
  assert.equal(all.length, 3);
  const first: number[] = [];
  index.query(3, (j) => {
    first.push(j);
    return true;
  });
  assert.equal(first.length, 1);
});
