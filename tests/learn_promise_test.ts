/**
 * One promise over every retrain: whole learning streams (the learner's
 * schedule, a census before the first bundle, a verdict-blind coin after,
 * the proxy's drops) in a world whose truth is known
 * (`_learning_streams.ts`). With each question's k-th test run at its
 * share of delta (`testLevel`), the streams where any swapped-in bundle
 * disagrees above alpha stay within delta; testing every retrain at the
 * full delta, the first bundle that passes swapped in, breaks it.
 */

import assert from "node:assert/strict";
import {
  DELTA,
  type Drop,
  type Falsify,
  learningStream,
  type Policy,
} from "./_learning_streams.ts";

/** Share of `runs` streams where a swapped-in bundle broke alpha, and what they did. */
function streams(
  runs: number,
  n: number,
  rate: number,
  drop: Drop,
  policy: Policy,
) {
  let violated = 0;
  let swaps = 0;
  let tests = 0;
  let certified = 0;
  for (let r = 0; r < runs; r++) {
    const o = learningStream(
      7919 * r + n + Math.round(1000 * rate),
      n,
      rate,
      drop,
      policy,
    );
    if (o.violated) violated++;
    swaps += o.swaps;
    tests += o.tests;
    certified += o.certified;
  }
  return {
    violated: violated / runs,
    swaps: swaps / runs,
    tests: tests / runs,
    certified: certified / runs,
  };
}

/** The violation rate delta allows over `runs` streams, with three standard errors of sampling noise. */
const slack = (runs: number) =>
  DELTA + 3 * Math.sqrt((DELTA * (1 - DELTA)) / runs);

Deno.test("a learner that spends delta across its tests keeps one promise over every retrain", async (t) => {
  const runs = 120;
  const drops: Drop[] = ["none", "random", "adversarial"];
  let config = 0;
  for (const n of [2000, 8000, 20000]) {
    for (const rate of [0.02, 0.1, 0.25]) {
      const drop = drops[config++ % drops.length]!;
      await t.step(`${n} decisions, rate ${rate}, drop ${drop}`, () => {
        const r = streams(runs, n, rate, drop, "spent");
        console.log(
          `${n} decisions at rate ${rate}, drop ${drop}: a swapped-in bundle above alpha in ${
            (100 * r.violated).toFixed(1)
          }% of ${runs} streams (allowed ${(100 * slack(runs)).toFixed(1)}%); ${
            r.tests.toFixed(1)
          } tests, ${r.swaps.toFixed(1)} swaps, the last certifying ${
            (100 * r.certified).toFixed(0)
          }%`,
        );
        assert.ok(r.violated <= slack(runs), `violations ${r.violated}`);
        // Not vacuous: bundles are tested and swapped in (a proxy that drops
        // at random leaves no stretch a census, so only picks calibrate).
        if (n === 20000 || (n >= 8000 && drop !== "random")) {
          assert.ok(r.swaps >= 1, `swaps ${r.swaps}`);
          assert.ok(r.certified >= 0.3, `certified ${r.certified}`);
        }
      });
    }
  }
});

Deno.test("retesting every retrain at the full delta breaks the promise over the stream", () => {
  // The same streams with every test at the full delta: twenty tests on
  // overlapping evidence, the first bundle that passes swapped in.
  const runs = 200;
  const broken = [0.02, 0.1, 0.25].map((rate) => {
    const full = streams(runs, 20000, rate, "none", "full");
    const spent = streams(runs, 20000, rate, "none", "spent");
    console.log(
      `20000 decisions at rate ${rate}: above alpha in ${
        (100 * full.violated).toFixed(1)
      }% of streams at the full delta (${full.tests.toFixed(1)} tests), ${
        (100 * spent.violated).toFixed(1)
      }% spent (${spent.tests.toFixed(1)} tests)`,
    );
    assert.ok(spent.violated <= slack(runs));
    return full.violated > slack(runs);
  });
  assert.ok(broken.filter((b) => b).length >= 2, `broken at ${broken}`);
});

Deno.test("a proxy that falsifies feedback cannot break the promise when it cannot tell the calibration picks, and breaks it when it can", async (t) => {
  // The proxy reports an agreement for every text of a confidence band it
  // wants certified. Hidden picks: it must do so on every decision of the
  // band, so the picks stand for what it reports for the traffic. Leaked
  // picks (an id whose kind byte told them): on the picks only.
  const runs = 80;
  const falsified = (n: number, falsify: Falsify) => {
    let violated = 0;
    let swaps = 0;
    for (let r = 0; r < runs; r++) {
      const o = learningStream(
        7919 * r + n + 100,
        n,
        0.1,
        "none",
        "spent",
        undefined,
        falsify,
      );
      if (o.violated) violated++;
      swaps += o.swaps;
    }
    return { violated: violated / runs, swaps: swaps / runs };
  };
  for (const n of [2000, 8000, 20000]) {
    await t.step(`${n} decisions, picks hidden`, () => {
      const r = falsified(n, "hidden");
      console.log(
        `${n} decisions, falsifying proxy, picks hidden: above alpha (as the proxy reports the traffic) in ${
          (100 * r.violated).toFixed(1)
        }% of ${runs} streams (allowed ${(100 * slack(runs)).toFixed(1)}%), ${
          r.swaps.toFixed(1)
        } swaps`,
      );
      assert.ok(r.violated <= slack(runs), `violations ${r.violated}`);
    });
  }
  await t.step("20000 decisions, picks leaked: broken", () => {
    const r = falsified(20000, "leak");
    console.log(
      `20000 decisions, falsifying proxy, picks leaked: above alpha in ${
        (100 * r.violated).toFixed(1)
      }% of ${runs} streams`,
    );
    assert.ok(r.violated > 3 * slack(runs), `violations ${r.violated}`);
  });
});
