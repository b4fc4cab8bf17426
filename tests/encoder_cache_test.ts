import assert from "node:assert/strict";
import {
  EmbeddingCache,
  type EncoderName,
  readCache,
  writeCache,
} from "../src/encoder/mod.ts";

const ENC: EncoderName = { package: "p", version: "1", sha256: "a".repeat(64) };
const OTHER: EncoderName = { ...ENC, sha256: "b".repeat(64) };
const fake = (t: string) =>
  Float32Array.from({ length: 4 }, (_, d) => t.length + d / 8);

Deno.test("EmbeddingCache embeds only texts it lacks, once each, and keeps them across a file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/cache.bin`;
    const first = await readCache(path, ENC, 4);
    assert.match(first.note!, /does not exist yet/);
    const asked: string[][] = [];
    const embed = (missing: string[]) => {
      asked.push(missing);
      return Promise.resolve(missing.map(fake));
    };
    const v = await first.cache.embedAll(["a", "bb", "a", "ccc é"], embed);
    assert.deepEqual(asked, [["a", "bb", "ccc é"]]);
    assert.deepEqual(Array.from(v[2]!), Array.from(fake("a")));
    await writeCache(path, first.cache);

    const again = await readCache(path, ENC, 4);
    assert.equal(again.note, null);
    assert.equal(again.cache.size, 3);
    const w = await again.cache.embedAll(["ccc é", "dddd", "a"], embed);
    assert.deepEqual(asked[1], ["dddd"]);
    assert.deepEqual(Array.from(w[0]!), Array.from(fake("ccc é")));
    assert.equal(again.cache.added, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readCache() starts afresh for another encoder and refuses a file that is not a cache", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/cache.bin`;
    const c = new EmbeddingCache(ENC, 4);
    c.set("x", fake("x"));
    await writeCache(path, c);
    const other = await readCache(path, OTHER, 4);
    assert.match(other.note!, /another encoder/);
    assert.equal(other.cache.size, 0);
    await Deno.writeTextFile(path, "not a cache at all, not at all");
    await assert.rejects(
      () => readCache(path, ENC, 4),
      /not an embedding cache/,
    );
    const bytes = c.encode();
    await Deno.writeFile(path, bytes.subarray(0, bytes.length - 3));
    await assert.rejects(() => readCache(path, ENC, 4), /cut short/);
    assert.throws(() => c.set("y", new Float32Array(3)), RangeError);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
