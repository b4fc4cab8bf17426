/**
 * An option the model adds holds its question only when the traffic
 * changed: a rare option met once after thousands of labels is sampling
 * (learned at the next retrain, calibration kept), a product launched
 * mid-stream is a change (held as before), and one stray label, however
 * late, never holds a question.
 */

import assert from "node:assert/strict";
import {
  CHANGE_P,
  changeP,
  OptionChangeWatch,
} from "../src/learn/option_change.ts";
import { Learner } from "../src/learn/mod.ts";
import type { Table } from "../src/engine/mod.ts";
import { rng, tempDir } from "./_fixtures.ts";

Deno.test("changeP() is the chance that every later sighting falls after the first one by sampling alone", () => {
  assert.equal(changeP(10_000, 50, 0), 1);
  assert.equal(changeP(100, 100, 1), 0.5);
  // A percent of the traffic after 5,000 labels without it: found within
  // a few hundred labels.
  assert.ok(changeP(5000, 300, 3) <= CHANGE_P);
  // The same sightings early in a question's life prove nothing.
  assert.ok(changeP(200, 300, 3) > 0.1);
});

Deno.test("OptionChangeWatch tells a launch from a rare option met late", () => {
  const random = rng(5);
  // A rare option (one in 20,000) met after 5,000 labels: 3,000 more labels
  // at that rate never call it a change.
  const rare = new OptionChangeWatch();
  let changed = rare.observe("intent", 5000, "rare_option");
  for (let i = 0; i < 3000 && changed === null; i++) {
    changed = rare.observe(
      "intent",
      5001 + i,
      random() < 1 / 20_000 ? "rare_option" : null,
    );
  }
  assert.equal(changed, null);
  assert.deepEqual(rare.options("intent"), ["rare_option"]);
  // A launch: two new options at 1% of the traffic each.
  const launch = new OptionChangeWatch();
  let at = -1;
  launch.observe("intent", 5000, "new_card");
  for (let i = 0; i < 2000 && at < 0; i++) {
    const r = random();
    const added = r < 0.01 ? "new_card" : r < 0.02 ? "new_loan" : null;
    if (launch.observe("intent", 5001 + i, added) !== null) at = i;
  }
  assert.ok(at >= 0 && at < 400, `found after ${at} labels`);
  // The watch ends once a bundle has every option seen.
  rare.settle("intent", (o) => o === "rare_option");
  assert.deepEqual(rare.questions(), []);
});

/** A table with one choice question over `options` (all the learner reads of it). */
function tableOf(options: string[]): Table {
  return {
    questions: [],
    info: {},
    byName: new Map([["intent", {
      kind: "choice",
      optionIndex: new Map(options.map((o, i) => [o, i])),
    }]]),
  } as unknown as Table;
}

/** A learner in `dir` serving a table of options a-d, and the holds it tells of. */
function learnerOf(dir: string) {
  const options = ["a", "b", "c", "d"];
  const table = tableOf(options);
  const holds: string[] = [];
  const learner = new Learner({
    dir,
    training: () => ({ semantic: "off" }),
    inForce: () => null,
    swapIn: () => Promise.resolve(),
    served: () => table,
    optionsAdded: (q, added) => holds.push(`${q} ${added}`),
    log: () => {},
    tickMs: 0,
  });
  return { options, table, holds, learner };
}

Deno.test("a learner holds a question for a launch, never for one stray label", async (t) => {
  await using dir = await tempDir();
  const { options, table, holds, learner } = learnerOf(dir.path);
  const random = rng(9);
  const label = () => options[Math.floor(random() * options.length)]!;
  try {
    for (let i = 0; i < 4000; i++) learner.observe("intent", label(), table);
    await t.step("one stray label after 4,000 holds nothing", () => {
      learner.observe("intent", "zz_fake_option", table);
      for (let i = 0; i < 2000; i++) learner.observe("intent", label(), table);
      assert.deepEqual(holds, []);
      assert.deepEqual(learner.stats().held, []);
    });
    await t.step(
      "a launch at 2% of the traffic holds it within 300 labels",
      () => {
        let i = 0;
        for (; i < 1000 && holds.length === 0; i++) {
          learner.observe(
            "intent",
            random() < 0.02 ? "new_product" : label(),
            table,
          );
        }
        assert.deepEqual(holds, ["intent true"]);
        assert.ok(i < 300, `held after ${i} labels`);
        assert.deepEqual(learner.stats().held, ["intent"]);
      },
    );
  } finally {
    learner.close();
  }
});

Deno.test("an option named only by items without an id never holds its question, however often it comes", async () => {
  await using dir = await tempDir();
  const { options, table, holds, learner } = learnerOf(dir.path);
  const random = rng(11);
  const label = () => options[Math.floor(random() * options.length)]!;
  try {
    for (let i = 0; i < 4000; i++) learner.observe("intent", label(), table);
    // One made-up item in ten names a fake option: as a launch would if
    // the decisions were the service's, it would hold within 300 labels.
    for (let i = 0; i < 2000; i++) {
      if (random() < 0.1) {
        learner.observe("intent", "zz_fake_option", table, false);
      } else learner.observe("intent", label(), table);
    }
    assert.deepEqual(holds, []);
    assert.deepEqual(learner.stats().held, []);
    assert.equal(learner.unlearned("intent"), undefined);
  } finally {
    learner.close();
  }
});

Deno.test("withBackedOptions() keeps an added option with one label of a decision the service made or of the operator's traces, and drops the rest", async () => {
  const { withBackedOptions } = await import("../src/learn/backed_options.ts");
  const table = tableOf(["a", "b"]);
  // Rows: 0 seed trace "c"; 1 id-less feedback "fake"; 2 feedback with an
  // id "new"; 3 id-less feedback "new"; 4 id-less "a"; 5 id-less "fake".
  const traces = {
    texts: ["t0", "t1", "t2", "t3", "t4", "t5"],
    times: null,
    groups: null,
    groupNames: [],
    questions: [{
      name: "intent",
      kind: "choice" as const,
      options: ["c", "fake", "new", "a"],
      labels: Int32Array.of(0, 1, 2, 2, 3, 1),
    }],
    feedback: Uint8Array.of(0, 1, 1, 1, 1, 1),
    origins: {
      source: new Uint8Array(6),
      rate: new Float64Array(6),
      decidedAt: new Float64Array(6),
      issuer: new Int32Array(6),
      bundle: new Int32Array(6),
      issuers: [],
      bundles: [],
      ids: new Map([[2, "decision-2"]]),
    },
  };
  const { traces: kept, dropped } = withBackedOptions(traces, table);
  assert.deepEqual(dropped, new Map([["intent", ["fake"]]]));
  const q = kept.questions[0]!;
  assert.deepEqual(q.options, ["c", "new", "a"]);
  assert.deepEqual([...q.labels], [0, -1, 1, 1, 2, -1]);
  // No bundle yet: every option is one added, and needs its backing too.
  const first = withBackedOptions(traces, null);
  assert.deepEqual(first.traces.questions[0]!.options, ["c", "new"]);
  assert.deepEqual(first.dropped, new Map([["intent", ["fake", "a"]]]));
  // A client that sends no ids at all: nothing backs any label, and the
  // question is learned as it was told (the service warns of the ids).
  const idless = { ...traces, feedback: Uint8Array.of(1, 1, 1, 1, 1, 1) };
  idless.origins = { ...traces.origins, ids: new Map() };
  assert.equal(withBackedOptions(idless, null).traces, idless);
});
