import assert from "node:assert/strict";
import { train } from "../src/train/trainer.ts";
import {
  DEFAULT_TRAIN_OPTIONS,
  type TrainOptions,
} from "../src/train/options.ts";
import {
  TrainOptionError,
  trainOptions,
  validateTrainOptions,
} from "../src/train/validate_options.ts";
import { isInputError } from "../src/cli/failure.ts";
import { smallTrainOptions, syntheticTraceSet } from "./_fixtures.ts";

const traces = syntheticTraceSet({ count: 300, seed: 3, noise: 0.01 });

/** Options that are wrong, each with the option the error must name. */
const WRONG: [string, Partial<TrainOptions>, string, RegExp][] = [
  ["alpha above 1", { alpha: 1.5 }, "alpha", /must be in \(0, 1\): got 1\.5/],
  ["delta 0", { delta: 0 }, "delta", /got 0$/],
  ["seed not whole", { seed: 1.5 }, "seed", /an integer: got 1\.5/],
  ["alpha NaN", { alpha: NaN }, "alpha", /got NaN/],
  ["alpha a string", { alpha: "0.1" as unknown as number }, "alpha", /"0\.1"/],
  ["no workers", { workers: 0 }, "workers", /from 1 to 64: got 0/],
  ["epochs 0", { maxEpochs: 0 }, "maxEpochs", /positive integer/],
  ["split mode", { split: "weekly" as "auto" }, "split", /one of auto,/],
  ["semantic mode", { semantic: "maybe" as "auto" }, "semantic", /"maybe"/],
  ["similarity 0", { similarity: 0 }, "similarity", /\(0, 1\]: got 0/],
  ["empty l2 grid", { l2Grid: [] }, "l2Grid", /got \[\]/],
  ["dropout 1", { wordDropout: 1 }, "wordDropout", /\[0, 1\): got 1/],
  ["scope score", { scopeScore: "x" as "spread" }, "scopeScore", /"x"/],
  [
    "shares leave nothing",
    { calibrationShare: 0.5, testShare: 0.45 },
    "calibrationShare",
    /leave at least 10% of traces to train on/,
  ],
  [
    "radius 0",
    { settings: { ...DEFAULT_TRAIN_OPTIONS.settings, min_radius: 0 } },
    "settings.min_radius",
    /got 0/,
  ],
  [
    "drift delta 1",
    {
      settings: {
        ...DEFAULT_TRAIN_OPTIONS.settings,
        drift: { ...DEFAULT_TRAIN_OPTIONS.settings.drift, delta: 1 },
      },
    },
    "settings.drift.delta",
    /got 1$/,
  ],
  [
    "forced threshold 2",
    {
      settings: {
        ...DEFAULT_TRAIN_OPTIONS.settings,
        force_thresholds: { q: 2 },
      },
    },
    "settings.force_thresholds.q",
    /\[0, 1\]: got 2/,
  ],
];

for (const [what, wrong, option, message] of WRONG) {
  Deno.test(`train() called directly refuses bad options before any work: ${what}`, () => {
    let progressed = false;
    const options = {
      ...smallTrainOptions({}),
      ...wrong,
      progress: () => (progressed = true),
    };
    assert.throws(
      () => train(traces, options),
      (e: unknown) => {
        assert.ok(e instanceof TrainOptionError, String(e));
        assert.ok(e instanceof RangeError);
        assert.equal(e.options[0], option);
        assert.match(e.message, message);
        // The commands report it as bad input (exit 2), not as a bug.
        assert.equal(isInputError(e), true);
        return true;
      },
    );
    assert.equal(progressed, false, "nothing ran before the check");
  });
}

Deno.test("trainOptions() fills what is left out with the defaults and checks the rest", () => {
  assert.deepEqual(trainOptions(), DEFAULT_TRAIN_OPTIONS);
  const o = trainOptions({
    alpha: 0.1,
    seed: undefined,
    settings: { min_radius: 3, drift: { scope_p: 0 } },
  });
  assert.equal(o.alpha, 0.1);
  assert.equal(o.seed, DEFAULT_TRAIN_OPTIONS.seed);
  assert.equal(o.settings.min_radius, 3);
  assert.equal(o.settings.drift.scope_p, 0);
  assert.equal(
    o.settings.drift.delta,
    DEFAULT_TRAIN_OPTIONS.settings.drift.delta,
  );
  assert.throws(
    () => trainOptions({ testShare: 1 }),
    /testShare must be in \(0, 1\): got 1/,
  );
});

Deno.test("validateTrainOptions() accepts the defaults and returns them unchanged", () => {
  assert.equal(
    validateTrainOptions(DEFAULT_TRAIN_OPTIONS),
    DEFAULT_TRAIN_OPTIONS,
  );
});
