import assert from "node:assert/strict";
import { autoNoise, keepsTier } from "../src/train/semantic.ts";
import {
  certifyTwoTiers,
  ruleCertified,
  twoTierCounts,
} from "../src/train/two_tier_certify.ts";
import { rng } from "./_fixtures.ts";

/**
 * A world of two tiers: the table's and the second tier's confidences are
 * independent uniforms; the table errs with probability `table(c)`, the
 * second tier (worse) with `tier(c)`; a share `withheld` of texts is
 * withheld from the second tier (its novelty guard). `risk(L)` is the true
 * disagreement rate among the answers the two-tier rule certifies at `L`.
 */
interface World {
  name: string;
  table: (c: number) => number;
  tier: (c: number) => number;
  withheld: number;
  risk: (L: number) => number;
}

/** Risk by numeric integration over the two uniforms. */
function riskOf(w: Omit<World, "risk">): (L: number) => number {
  const steps = 2000;
  const mean = (f: (c: number) => number, from: number) => {
    let s = 0;
    for (let i = 0; i < steps; i++) {
      s += f(from + ((1 - from) * (i + 0.5)) / steps);
    }
    return (s / steps) * (1 - from);
  };
  return (L) => {
    const kept = 1 - w.withheld;
    const mass = (1 - L) + L * kept * (1 - L);
    if (mass <= 0) return 0;
    return (mean(w.table, L) + L * kept * mean(w.tier, L)) / mass;
  };
}

const worlds: World[] = ([
  {
    name: "decreasing, the second tier worse",
    table: (c) => 0.3 * (1 - c) ** 2,
    tier: (c) => 0.4 * (1 - c) ** 2 + 0.005,
    withheld: 0.05,
  },
  {
    name: "flat just above alpha",
    table: () => 0.06,
    tier: () => 0.06,
    withheld: 0,
  },
  {
    name: "a second tier that errs when sure",
    table: (c) => 0.2 * (1 - c),
    tier: (c) => 0.02 + 0.1 * c,
    withheld: 0.1,
  },
] as Omit<World, "risk">[]).map((w) => ({ ...w, risk: riskOf(w) }));

/** One draw of `n` texts of a world: both tiers' confidences and errors. */
function draw(world: World, n: number, random: () => number) {
  const tableConf = new Float64Array(n);
  const tableWrong = new Uint8Array(n);
  const tierConf = new Float64Array(n);
  const tierWrong = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    tableConf[i] = random();
    tableWrong[i] = random() < world.table(tableConf[i]!) ? 1 : 0;
    const c = random();
    tierWrong[i] = random() < world.tier(c) ? 1 : 0;
    tierConf[i] = random() < world.withheld ? -1 : c;
  }
  return { tableConf, tableWrong, tierConf, tierWrong };
}

Deno.test("twoTierCounts() counts the table's answer where it reaches the candidate, else the second tier's", () => {
  const counts = twoTierCounts(
    [0.9, 0.5],
    Float64Array.of(0.95, 0.6, 0.3, -1),
    Uint8Array.of(0, 1, 0, 0),
    Float64Array.of(0.2, 0.92, 0.7, -1),
    Uint8Array.of(1, 0, 1, 1),
  );
  // At 0.9: text 0 by the table (right), text 1 by the second tier (right);
  // text 3 is withheld (by the table's rules, so from both tiers).
  assert.deepEqual(counts[0], { n: 2, k: 0, effective: 2 });
  // At 0.5: text 1 now by the table (wrong), text 2 by the second tier (wrong).
  assert.deepEqual(counts[1], { n: 3, k: 2, effective: 3 });
});

Deno.test("ruleCertified() finds more to certify with a good second tier, none with a bad one", () => {
  const random = rng(5);
  const n = 2000;
  const table = {
    confidences: new Float64Array(n),
    correct: new Uint8Array(n),
  };
  const good = { confidences: new Float64Array(n), correct: new Uint8Array(n) };
  for (let i = 0; i < n; i++) {
    table.confidences[i] = random();
    table.correct[i] = random() < 0.5 * (1 - table.confidences[i]!) ? 0 : 1;
    good.confidences[i] = random();
    good.correct[i] = random() < 0.05 * (1 - good.confidences[i]!) ? 0 : 1;
  }
  const targets = { alpha: 0.05, delta: 0.05 };
  const alone = ruleCertified(table.confidences, table.correct, null, targets);
  const both = ruleCertified(table.confidences, table.correct, good, targets);
  assert.ok(both > alone + 0.2, `${both} vs ${alone}`);
});

Deno.test("the two-tier rule keeps its promise for all certified answers together at every calibration size", async (t) => {
  const alpha = 0.05;
  const delta = 0.05;
  for (const n of [150, 600, 2000]) {
    await t.step(`${n} calibration answers`, () => {
      const runs = n >= 2000 ? 200 : 400;
      const slack = delta + 3 * Math.sqrt((delta * (1 - delta)) / runs);
      for (const world of worlds) {
        const random = rng(11 * n + world.name.length);
        let violations = 0;
        let calibrated = 0;
        for (let r = 0; r < runs; r++) {
          const v = draw(world, n, random);
          const validation = {
            table: {
              confidences: v.tableConf,
              correct: v.tableWrong.map((w) => 1 - w),
            },
            tier: {
              confidences: v.tierConf,
              correct: v.tierWrong.map((w) => 1 - w),
            },
          };
          const { choice } = certifyTwoTiers(
            validation,
            draw(world, n, random),
            alpha,
            delta,
          );
          if (choice.threshold === null) continue;
          calibrated++;
          if (world.risk(choice.threshold) > alpha) violations++;
        }
        const rate = violations / runs;
        console.log(
          `two tiers, n=${n}, ${world.name}: risk above alpha in ${
            (rate * 100).toFixed(1)
          }% of ${runs} runs (allowed ${
            (slack * 100).toFixed(1)
          }%), calibrated in ${calibrated}`,
        );
        assert.ok(rate <= slack, `${world.name}: violation rate ${rate}`);
        // Not vacuous: where the data allow it, most runs certify.
        if (world.name.startsWith("decreasing") && n >= 600) {
          assert.ok(calibrated >= runs * 0.8, `calibrated in ${calibrated}`);
        }
      }
    });
  }
});

Deno.test("keepsTier() keeps a second tier where it certifies more on validation, or where the table leaves room and it does no worse beyond the noise", () => {
  // 338 answers: two standard errors of 45.6% are about 5.4 points.
  assert.ok(Math.abs(autoNoise(0.456, 338) - 0.0542) < 0.001);
  assert.equal(keepsTier({ table: 0.456, both: 0.426 }, 338), true);
  assert.equal(keepsTier({ table: 0.456, both: 0.39 }, 338), false);
  assert.equal(keepsTier({ table: 0.3, both: 0.6 }, 338), true);
  assert.equal(keepsTier({ table: 0, both: 0 }, 338), false);
  // No room and no gain: the table alone.
  assert.equal(keepsTier({ table: 0.99, both: 0.99 }, 2000), false);
  assert.equal(keepsTier({ table: 1, both: 1 }, 186), false);
  // One validation answer more is noise; two are more.
  assert.equal(keepsTier({ table: 0.919, both: 0.919 + 1 / 186 }, 186), false);
  assert.equal(keepsTier({ table: 0.984, both: 0.984 + 2 / 186 }, 186), true);
});
