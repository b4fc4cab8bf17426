import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { train } from "../src/train/trainer.ts";
import {
  bundleFiles,
  smallTrainOptions,
  syntheticTraceSet,
} from "./_fixtures.ts";

function trainOnce(seed: number) {
  return train(
    syntheticTraceSet({ count: 900, seed: 21, noise: 0.005 }),
    smallTrainOptions({ seed }),
  );
}

Deno.test("train() with the same seed twice gives byte-identical weights and report figures", async () => {
  const a = await bundleFiles(trainOnce(5));
  const b = await bundleFiles(trainOnce(5));
  assert.deepEqual([...a.keys()], [...b.keys()]);
  assert.ok(
    Buffer.compare(a.get("weights.bin")!, b.get("weights.bin")!) === 0,
    "weights.bin differs",
  );
  const report = (m: Map<string, Uint8Array>) => {
    const r = JSON.parse(new TextDecoder().decode(m.get("report.json")));
    delete r.seconds;
    return r;
  };
  assert.deepEqual(report(a), report(b));
  const c = await bundleFiles(trainOnce(6));
  assert.ok(
    Buffer.compare(a.get("weights.bin")!, c.get("weights.bin")!) !== 0,
    "another seed changes the weights",
  );
});

Deno.test({
  name: "train() with the same seed twice gives byte-identical bundle files",
  async fn() {
    const a = await bundleFiles(trainOnce(5));
    // The second run happens on a slower machine: its clock advances a second per reading.
    const now = performance.now.bind(performance);
    let readings = 0;
    performance.now = () => now() + 1000 * readings++;
    let b;
    try {
      b = await bundleFiles(trainOnce(5));
    } finally {
      performance.now = now;
    }
    for (const [name, bytes] of a) {
      assert.ok(Buffer.compare(bytes, b.get(name)!) === 0, `${name} differs`);
    }
  },
});
