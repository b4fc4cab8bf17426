import assert from "node:assert/strict";
import { countAtMost, countBelow } from "../src/engine/_sorted.ts";

Deno.test("countBelow() and countAtMost() count in a sorted array, ties on either side", () => {
  const sorted = Float32Array.of(0.1, 0.2, 0.2, 0.2, 0.5);
  assert.equal(countBelow(sorted, 0.2 as number), 1);
  assert.equal(countAtMost(sorted, Math.fround(0.2)), 4);
  assert.equal(countBelow(sorted, 0), 0);
  assert.equal(countAtMost(sorted, 1), 5);
  assert.equal(countAtMost(new Float32Array(0), 1), 0);
  // Against a plain count, on random data.
  const values = Array.from({ length: 200 }, (_, i) => (i * 37) % 50).sort((
    a,
    b,
  ) => a - b);
  for (let x = -1; x <= 51; x++) {
    assert.equal(countBelow(values, x), values.filter((v) => v < x).length);
    assert.equal(countAtMost(values, x), values.filter((v) => v <= x).length);
  }
});
