import {
  deepStrictEqual as assertEquals,
  ok as assert,
  rejects,
} from "node:assert/strict";
import {
  EMBEDDING_SIZE,
  EncoderPool,
  loadEncoder,
  QueueFull,
  readThisEncoder,
  sameEncoder,
  THIS_ENCODER,
} from "../src/encoder/mod.ts";

const files = await readThisEncoder();
const encoder = await loadEncoder(files);

Deno.test("readThisEncoder() hashes the package's files to THIS_ENCODER", () => {
  assert(sameEncoder(files.name, THIS_ENCODER));
  assertEquals(files.name.sha256.length, 64);
});

Deno.test("loadEncoder() embeds texts to 512 numbers, the same whatever the batch", async () => {
  const alone = await encoder.embed(["I lost my card"]);
  const batch = await encoder.embed([
    "how do I top up by bank transfer?",
    "I lost my card",
    "",
  ]);
  assertEquals(alone[0]!.length, EMBEDDING_SIZE);
  assertEquals(batch.length, 3);
  assertEquals(Array.from(batch[1]!), Array.from(alone[0]!));
  const again = await encoder.embed(["I lost my card"]);
  assertEquals(Array.from(again[0]!), Array.from(alone[0]!));
  // Different texts, different vectors; an empty text still has one.
  assert(batch[0]!.some((x, i) => x !== batch[1]![i]));
  assertEquals(batch[2]!.length, EMBEDDING_SIZE);
  assertEquals(await encoder.embed([]), []);
});

Deno.test("EncoderPool embeds a list in order on workers and refuses beyond its queue", async () => {
  const pool = await EncoderPool.start(files, { workers: 2, queue: 2 });
  try {
    const texts = Array.from(
      { length: 21 },
      (_, i) => `text number ${i} about cards`,
    );
    const seen: number[] = [];
    const vectors = await pool.embedAll(texts, 4, (done) => seen.push(done));
    assertEquals(vectors.length, 21);
    assertEquals(seen[seen.length - 1], 21);
    const direct = await encoder.embed([texts[13]!]);
    assertEquals(Array.from(vectors[13]!), Array.from(direct[0]!));
    const a = pool.embed(["a"]);
    const b = pool.embed(["b"]);
    await rejects(() => pool.embed(["c"]), QueueFull);
    await Promise.all([a, b]);
  } finally {
    pool.close();
  }
  await rejects(() => pool.embed(["x"]), /closed/);
});
