/**
 * The second tier's queue as the service uses it (`PoolEncoder`): bounded
 * in texts, a batch of texts taken whole when it fits in the room left or
 * when nothing waits, refused at once (shed) otherwise.
 */

import assert from "node:assert/strict";
import type { EncoderPool } from "../src/encoder/mod.ts";
import { PoolEncoder } from "../src/encoder/queue.ts";

/** A pool whose batches finish when the test says. */
function heldPool() {
  const held: (() => void)[] = [];
  const batches: number[] = [];
  const pool = {
    embed(texts: readonly string[]) {
      batches.push(texts.length);
      return new Promise<Float32Array[]>((resolve) =>
        held.push(() => resolve(texts.map(() => new Float32Array(512))))
      );
    },
    close() {},
  } as unknown as EncoderPool;
  return { pool, held, batches };
}

Deno.test("PoolEncoder counts texts in flight, takes a batch that fits or finds nothing waiting, and sheds the rest", async () => {
  const { pool, held, batches } = heldPool();
  const encoder = new PoolEncoder(pool, 4);
  const a = encoder.tryEmbed(["a", "b", "c"]);
  assert.notEqual(a, null, "an idle queue takes a batch");
  assert.equal(encoder.inFlight, 3);
  assert.equal(encoder.tryEmbed(["d", "e"]), null, "3 + 2 texts exceed 4");
  const b = encoder.tryEmbed(["d"]);
  assert.notEqual(b, null, "3 + 1 fit");
  assert.equal(encoder.inFlight, 4);
  assert.equal(
    encoder.tryEmbed(["e"]),
    null,
    "a full queue sheds a single text",
  );
  for (const release of held.splice(0)) release();
  assert.equal((await a!).length, 3);
  await b;
  assert.equal(encoder.inFlight, 0);
  // Nothing waits: a batch larger than the bound is taken whole, as one
  // batch to the encoder.
  const big = encoder.tryEmbed(Array.from({ length: 10 }, (_, i) => `t${i}`));
  assert.notEqual(big, null);
  assert.equal(encoder.inFlight, 10);
  assert.equal(encoder.tryEmbed(["x"]), null);
  for (const release of held.splice(0)) release();
  assert.equal((await big!).length, 10);
  assert.deepEqual(batches, [3, 1, 10]);
  assert.equal(encoder.inFlight, 0);
});
