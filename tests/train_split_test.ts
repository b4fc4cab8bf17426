import assert from "node:assert/strict";
import { assignSplits, CALIBRATION, TEST, TRAIN } from "../src/train/split.ts";
import { textKey } from "../src/engine/text.ts";
import { pick, randInt, rng, syntheticTraces } from "./_fixtures.ts";

/** Variants of a text that normalise to the same key: case, white space, NFKC forms. */
function variants(random: () => number, text: string): string[] {
  const out = [text, text.toUpperCase(), `  ${text.replaceAll(" ", "  \t")}\n`];
  // Full-width letters fold to ASCII under NFKC.
  out.push(
    [...text].map((
      c,
    ) => (c >= "a" && c <= "z" && random() < 0.5
      ? String.fromCharCode(c.charCodeAt(0) + 0xfee0)
      : c)
    ).join(""),
  );
  out.push(text.replaceAll("fi", "\ufb01")); // the "fi" ligature
  return out;
}

Deno.test("assignSplits() never puts texts equal after normalisation in different splits", () => {
  const random = rng(11);
  const base = syntheticTraces({ count: 400, seed: 5 }).map((t) => t.text);
  const texts: string[] = [];
  for (const t of base) {
    texts.push(...variants(random, t).slice(0, 1 + randInt(random, 5)));
  }
  // Shuffle so duplicates are not neighbours.
  for (let i = texts.length - 1; i > 0; i--) {
    const j = randInt(random, i + 1);
    [texts[i], texts[j]] = [texts[j]!, texts[i]!];
  }
  for (const seed of [1, 2, 3]) {
    const split = assignSplits(texts, { calibration: 0.2, test: 0.1 }, seed);
    const where = new Map<string, number>();
    let dup = 0;
    texts.forEach((t, i) => {
      const key = textKey(t);
      const seen = where.get(key);
      if (seen === undefined) where.set(key, split[i]!);
      else {
        dup++;
        assert.equal(split[i], seen, `${JSON.stringify(t)} straddles splits`);
      }
    });
    assert.ok(dup > 200, "the data has duplicates to check");
    const counts = [TRAIN, CALIBRATION, TEST].map((s) =>
      split.filter((x) => x === s).length
    );
    assert.ok(counts.every((c) => c > 0), `every split is used: ${counts}`);
  }
});

Deno.test("assignSplits() is deterministic for a seed and changes with it", () => {
  const random = rng(3);
  const texts = Array.from(
    { length: 2000 },
    (_, i) => `${pick(random, ["a", "b", "c"])} text number ${i}`,
  );
  const a = assignSplits(texts, { calibration: 0.2, test: 0.1 }, 42);
  const b = assignSplits([...texts], { calibration: 0.2, test: 0.1 }, 42);
  assert.deepEqual(a, b);
  const c = assignSplits(texts, { calibration: 0.2, test: 0.1 }, 43);
  assert.notDeepEqual(a, c);
  // Shares are about right.
  const share = (s: number) => a.filter((x) => x === s).length / a.length;
  assert.ok(
    Math.abs(share(CALIBRATION) - 0.2) < 0.04,
    `calibration ${share(CALIBRATION)}`,
  );
  assert.ok(Math.abs(share(TEST) - 0.1) < 0.03, `test ${share(TEST)}`);
});
