import assert from "node:assert/strict";
import {
  CALIBRATION,
  FIT,
  resolveMode,
  type SplitOptions,
  splitTraces,
  TEST,
  VALIDATION,
} from "../src/train/split.ts";
import { effectiveSize } from "../src/train/union_find.ts";
import { textKey } from "../src/engine/text.ts";
import {
  FILLER_WORDS,
  pick,
  randInt,
  rng,
  syntheticTraces,
} from "./_fixtures.ts";

const SHARES: Omit<SplitOptions, "mode" | "seed"> = {
  calibration: 0.2,
  test: 0.1,
  validation: 0.15,
  similarity: 0.8,
};

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

function shuffled<T>(random: () => number, items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = randInt(random, i + 1);
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/** Asserts that no two traces with the same `key(i)` sit in different parts. */
function assertTogether(
  parts: Uint8Array,
  n: number,
  key: (i: number) => string | number,
  what: string,
): number {
  const where = new Map<string | number, number>();
  let repeats = 0;
  for (let i = 0; i < n; i++) {
    const k = key(i);
    const seen = where.get(k);
    if (seen === undefined) where.set(k, parts[i]!);
    else {
      repeats++;
      assert.equal(
        parts[i],
        seen,
        `${what} ${JSON.stringify(k)} straddles parts`,
      );
    }
  }
  return repeats;
}

Deno.test("splitTraces() never puts texts equal after normalisation in different parts in random mode", () => {
  const random = rng(11);
  const base = syntheticTraces({ count: 400, seed: 5 }).map((t) => t.text);
  const texts: string[] = [];
  for (const t of base) {
    texts.push(...variants(random, t).slice(0, 1 + randInt(random, 5)));
  }
  shuffled(random, texts);
  for (const seed of [1, 2, 3]) {
    for (const similarity of [1, 0.8]) {
      const { parts } = splitTraces({ texts }, {
        ...SHARES,
        similarity,
        mode: "random",
        seed,
      });
      const dup = assertTogether(
        parts,
        texts.length,
        (i) => textKey(texts[i]!),
        "text",
      );
      assert.ok(dup > 200, "the data has duplicates to check");
      for (const p of [FIT, VALIDATION, CALIBRATION, TEST]) {
        assert.ok(parts.includes(p), `part ${p} is used`);
      }
    }
  }
});

Deno.test("splitTraces() is deterministic for a seed, changes with it, and ignores trace order", () => {
  const random = rng(3);
  const texts = Array.from(
    { length: 2000 },
    (_, i) => `${pick(random, ["a", "b", "c"])} text number ${i}`,
  );
  const options = { ...SHARES, similarity: 1, mode: "random" as const };
  const a = splitTraces({ texts }, { ...options, seed: 42 });
  const b = splitTraces({ texts: [...texts] }, { ...options, seed: 42 });
  assert.deepEqual(a.parts, b.parts);
  const c = splitTraces({ texts }, { ...options, seed: 43 });
  assert.notDeepEqual(a.parts, c.parts);
  // Reordering the traces moves nobody.
  const order = shuffled(random, texts.map((_, i) => i));
  const d = splitTraces({ texts: order.map((i) => texts[i]!) }, {
    ...options,
    seed: 42,
  });
  order.forEach((i, at) => assert.equal(d.parts[at], a.parts[i]));
  // Shares are as asked (units are single texts here).
  assert.deepEqual(a.traces, [1190, 210, 400, 200]);
  assert.equal(a.traces[TEST], 200);
  assert.equal(a.traces[CALIBRATION], 400);
});

Deno.test("splitTraces() keeps near-duplicate clusters in one part in random mode", () => {
  // 300 clusters of 4 paraphrases: one base sentence with one word changed.
  const random = rng(8);
  const texts: string[] = [];
  const cluster: number[] = [];
  for (let c = 0; c < 300; c++) {
    const words = Array.from(
      { length: 10 },
      (_, j) => j < 6 ? `w${c}x${j}` : pick(random, FILLER_WORDS),
    );
    for (let v = 0; v < 4; v++) {
      const copy = [...words];
      copy[randInt(random, 10)] = pick(random, FILLER_WORDS);
      texts.push(copy.join(" "));
      cluster.push(c);
    }
  }
  const options = { ...SHARES, mode: "random" as const, seed: 5 };
  const clustered = splitTraces({ texts }, { ...options, similarity: 0.6 });
  assertTogether(clustered.parts, texts.length, (i) => cluster[i]!, "cluster");
  assert.ok(clustered.similarLinks >= 600, `${clustered.similarLinks} links`);
  // Without clustering, paraphrases straddle parts.
  const plain = splitTraces({ texts }, { ...options, similarity: 1 });
  assert.throws(() =>
    assertTogether(plain.parts, texts.length, (i) => cluster[i]!, "cluster")
  );
  assert.equal(plain.similarLinks, 0);
});

Deno.test("splitTraces() never lets a group straddle two parts", () => {
  const random = rng(21);
  const n = 3000;
  const texts = Array.from(
    { length: n },
    (_, i) => `message ${i} ${pick(random, FILLER_WORDS)}`,
  );
  // Groups of very different sizes, one of them large.
  const groups = Int32Array.from(
    { length: n },
    () => random() < 0.1 ? 0 : 1 + randInt(random, 150),
  );
  const s = splitTraces({ texts, groups }, {
    ...SHARES,
    mode: "group",
    seed: 2,
  });
  assert.equal(s.mode, "group");
  assertTogether(s.parts, n, (i) => groups[i]!, "group");
  assert.equal(s.units.reduce((a, b) => a + b, 0), 151);
  // Trace shares stay close to what was asked despite whole groups.
  assert.ok(Math.abs(s.traces[TEST]! / n - 0.1) < 0.05, `${s.traces}`);
  assert.ok(Math.abs(s.traces[CALIBRATION]! / n - 0.2) < 0.05, `${s.traces}`);
});

Deno.test("splitTraces() calibrates and tests on the most recent traces in time mode", () => {
  const random = rng(4);
  const n = 2000;
  const texts = Array.from({ length: n }, (_, i) => `note ${i}`);
  const times = Float64Array.from({ length: n }, () => 1.7e9 + random() * 1e7);
  const s = splitTraces({ texts, times }, { ...SHARES, mode: "auto", seed: 1 });
  assert.equal(s.mode, "time");
  const range = (p: number) => {
    const ts = [...times].filter((_, i) => s.parts[i] === p);
    return [Math.min(...ts), Math.max(...ts)];
  };
  const [, fitMax] = range(FIT);
  const [valMin, valMax] = range(VALIDATION);
  const [calMin, calMax] = range(CALIBRATION);
  const [testMin] = range(TEST);
  assert.ok(fitMax! <= valMin!, "validation is newer than fit");
  assert.ok(valMax! <= calMin!, "calibration is newer than validation");
  assert.ok(calMax! <= testMin!, "test is the newest");
  assert.deepEqual(s.traces, [1190, 210, 400, 200]);
});

Deno.test("splitTraces() lets a text recur across parts in time and group mode, as new traffic would", () => {
  // "thanks" in every group and at every time: linking equal texts would chain
  // all groups into one, or pull every "thanks" into the newest part.
  const n = 1200;
  const texts = Array.from(
    { length: n },
    (_, i) => i % 3 === 0 ? "thanks" : `message ${i}`,
  );
  const groups = Int32Array.from({ length: n }, (_, i) => i % 60);
  const times = Float64Array.from({ length: n }, (_, i) => i);
  const byGroup = splitTraces({ texts, groups }, {
    ...SHARES,
    mode: "group",
    seed: 1,
  });
  assert.equal(byGroup.units.reduce((a, b) => a + b, 0), 60);
  assert.ok(byGroup.traces[CALIBRATION]! > 0 && byGroup.traces[FIT]! > 0);
  assertTogether(byGroup.parts, n, (i) => groups[i]!, "group");
  const byTime = splitTraces({ texts, times }, {
    ...SHARES,
    mode: "time",
    seed: 1,
  });
  assert.deepEqual(byTime.traces, [714, 126, 240, 120]);
  const thanksIn = new Set(
    [...byTime.parts].filter((_, i) => texts[i] === "thanks"),
  );
  assert.equal(thanksIn.size, 4, "thanks sits in every part");
});

Deno.test("resolveMode() picks time, then group, then random, and refuses a mode the traces cannot follow", () => {
  const texts = ["a", "b", "c"];
  const times = Float64Array.from([1, 2, NaN]);
  const groups = Int32Array.from([0, 0, 1]);
  assert.equal(resolveMode({ texts, times, groups }, "auto", 1).mode, "group");
  // Too few groups to certify with: auto splits at random and says why.
  const few = resolveMode({ texts, times, groups }, "auto");
  assert.equal(few.mode, "random");
  assert.match(few.reason, /2 groups .* too few .*--split group forces it/);
  // 400 groups of 5: enough; one giant group among them: not enough.
  const many = Int32Array.from({ length: 2000 }, (_, i) => Math.floor(i / 5));
  const manyTexts = Array.from(many, (_, i) => `t${i}`);
  assert.equal(
    resolveMode({ texts: manyTexts, groups: many }, "auto").mode,
    "group",
  );
  const skewed = Int32Array.from(many, (g, i) => i < 1000 ? 0 : g);
  assert.equal(
    resolveMode({ texts: manyTexts, groups: skewed }, "auto").mode,
    "random",
  );
  assert.equal(resolveMode({ texts, groups }, "group").mode, "group");
  assert.equal(
    resolveMode({ texts, times: Float64Array.from([1, 2, 3]), groups }, "auto")
      .mode,
    "time",
  );
  const r = resolveMode({ texts, times }, "auto");
  assert.equal(r.mode, "random");
  assert.match(r.reason, /not every trace/);
  assert.equal(
    resolveMode({ texts }, "auto").reason,
    "no trace has a time or a group",
  );
  assert.throws(
    () => resolveMode({ texts, times }, "time"),
    (e: Error) =>
      e instanceof RangeError &&
      /--split time needs a time on every trace: 1 of 3 traces have none/.test(
        e.message,
      ),
  );
  assert.throws(() => resolveMode({ texts }, "group"), RangeError);
});

Deno.test("splitTraces() places large units no earlier than small ones", () => {
  // 100 groups of 20 different texts and 2,000 groups of one: half the
  // traces are in large groups, so about half of every part should be.
  const texts: string[] = [];
  const groups: number[] = [];
  for (let g = 0; g < 100; g++) {
    for (let r = 0; r < 20; r++) {
      texts.push(`message ${r} of group ${g}`);
      groups.push(g);
    }
  }
  for (let i = 0; i < 2000; i++) {
    texts.push(`single message number ${i}`);
    groups.push(100 + i);
  }
  for (const seed of [1, 2, 3]) {
    const s = splitTraces({ texts, groups: Int32Array.from(groups) }, {
      ...SHARES,
      mode: "group",
      seed,
    });
    for (const p of [TEST, CALIBRATION, FIT]) {
      let all = 0;
      let large = 0;
      s.parts.forEach((x, i) => {
        if (x !== p) return;
        all++;
        if (groups[i]! < 100) large++;
      });
      assert.ok(
        Math.abs(large / all - 0.5) < 0.25,
        `seed ${seed}, part ${p}: ${large} of ${all} traces are in large groups`,
      );
    }
  }
});

Deno.test("splitTraces() clusters around leaders, never chaining texts that are not alike", () => {
  // A chain: text i holds words i..i+5, so neighbours share 5 of 6 words
  // (cosine about 0.83) and texts six apart share none.
  const texts = Array.from(
    { length: 300 },
    (_, i) => Array.from({ length: 6 }, (_, j) => `w${i + j}`).join(" "),
  );
  const s = splitTraces({ texts }, { ...SHARES, mode: "random", seed: 1 });
  const sizes = new Map<number, number>();
  for (const u of s.unitOf) sizes.set(u, (sizes.get(u) ?? 0) + 1);
  assert.ok(s.similarLinks > 50, `${s.similarLinks} texts joined a leader`);
  // A leader gathers at most its two neighbours.
  assert.ok(Math.max(...sizes.values()) <= 3, `${Math.max(...sizes.values())}`);
});

Deno.test("effectiveSize() is n for singletons, the unit count for equal units, and small for a few large ones", () => {
  assert.equal(effectiveSize(Int32Array.of(0, 1, 2, 3)), 4);
  assert.equal(effectiveSize(Int32Array.of(0, 0, 1, 1, 2, 2)), 3);
  assert.ok(Math.abs(effectiveSize(Int32Array.of(0, 0, 0, 1)) - 1.6) < 1e-12);
  assert.equal(effectiveSize(new Int32Array(0)), 0);
});
