/**
 * The drift guard on real text: a BANKING77 table watching BANKING77 test
 * traffic, then NLU++ hotel traffic, then BANKING77 again. Uses
 * `../shared/data`; skips with a printed reason when it is absent.
 */

import { stateOf } from "./_fixtures.ts";
import assert from "node:assert/strict";
import { assess } from "../src/engine/answer.ts";
import { type PreparedText, prepareText } from "../src/engine/prepare.ts";
import { DriftMonitor, QUIET_GUARD } from "../src/engine/drift.ts";
import { readTraces } from "../src/traces/mod.ts";
import { shuffle } from "../src/train/split.ts";
import { seededRandom } from "../src/engine/random.ts";
import { train } from "../src/train/trainer.ts";
import { DEFAULT_TRAIN_OPTIONS } from "../src/train/options.ts";

const DATA = new URL("../../shared/data/", import.meta.url).pathname;
const present = (() => {
  try {
    Deno.statSync(`${DATA}banking77/train.csv`);
    Deno.statSync(`${DATA}nlupp/hotels/fold0.json`);
    return true;
  } catch {
    return false;
  }
})();
if (!present) console.log(`drift_real_data_test: skipped, no data at ${DATA}`);

Deno.test({
  name:
    "DriftMonitor on real text: quiet on BANKING77, alarmed by hotel texts, re-armed on BANKING77",
  ignore: !present,
  fn: async (t) => {
    const table = train(
      await readTraces([`${DATA}banking77/train.csv`]),
      DEFAULT_TRAIN_OPTIONS,
    ).table;
    const q = table.questions[0]!;
    const test = await readTraces([`${DATA}banking77/test.csv`]);
    const hotels: string[] = [];
    for (let f = 0; f < 20; f++) {
      for (
        const r of JSON.parse(
          await Deno.readTextFile(`${DATA}nlupp/hotels/fold${f}.json`),
        )
      ) {
        hotels.push(r.text);
      }
    }
    const bank: PreparedText[] = test.texts.map((x) =>
      prepareText(table, stateOf(table), x)
    );
    const foreign: PreparedText[] = hotels.map((x) =>
      prepareText(table, stateOf(table), x)
    );
    const window = table.settings.drift.rearm_window;

    await t.step(
      "no alarm in at least 95% of shuffled replays of 3,000 requests",
      () => {
        const runs = 40;
        let alarmed = 0;
        for (let r = 0; r < runs; r++) {
          const monitor = new DriftMonitor(table.settings.drift, r + 1);
          const order = shuffle(bank.map((_, i) => i), seededRandom(r + 1))
            .slice(0, 3000);
          for (const i of order) {
            assess(table, stateOf(table), bank[i]!, q.name, {}, monitor);
          }
          if (monitor.state(q.name).alarms > 0) alarmed++;
        }
        console.log(`BANKING77 replays with a false alarm: ${alarmed}/${runs}`);
        assert.ok(
          alarmed <= runs * 0.05,
          `${alarmed} of ${runs} replays raised the alarm`,
        );
      },
    );

    await t.step(
      "hotel texts raise the alarm within 300 requests, BANKING77 re-arms it within the window",
      () => {
        for (let r = 0; r < 10; r++) {
          const random = seededRandom(100 + r);
          const monitor = new DriftMonitor(table.settings.drift, r + 1);
          for (
            const i of shuffle(bank.map((_, i) => i), random).slice(0, 500)
          ) {
            assess(table, stateOf(table), bank[i]!, q.name, {}, monitor);
          }
          assert.equal(monitor.state(q.name).status, "quiet");
          let raised = -1;
          const f = shuffle(foreign.map((_, i) => i), random);
          for (let j = 0; j < 300 && raised < 0; j++) {
            const a = assess(
              table,
              stateOf(table),
              foreign[f[j]!]!,
              q.name,
              {},
              monitor,
            );
            if (!monitor.isQuiet(q.name)) {
              raised = j + 1;
              assert.equal(a.answer.certified, false);
            }
          }
          assert.ok(raised > 0, "no alarm within 300 hotel requests");
          // While the alarm stands, even a familiar text is not certified.
          const held =
            assess(table, stateOf(table), bank[0]!, q.name, {}, monitor).answer;
          assert.equal(held.flag === "drift" || held.certified === false, true);
          let cleared = -1;
          const back = shuffle(bank.map((_, i) => i), random);
          for (let j = 0; j < 3 * window && cleared < 0; j++) {
            assess(table, stateOf(table), bank[back[j]!]!, q.name, {}, monitor);
            if (monitor.isQuiet(q.name)) cleared = j + 1;
          }
          assert.ok(
            cleared > 0 && cleared <= 2 * window,
            `re-armed after ${cleared} requests`,
          );
          if (r === 0) {
            console.log(
              `alarm after ${raised} hotel requests; cleared after ${cleared} BANKING77 requests`,
            );
          }
        }
      },
    );

    await t.step(
      "single hotel texts are rarely certified; BANKING77 loses at most a point",
      () => {
        const share = (texts: PreparedText[], drift = table.settings.drift) => {
          const saved = table.settings.drift;
          table.settings.drift = drift;
          const n = texts.filter((p) =>
            assess(table, stateOf(table), p, q.name, {}, QUIET_GUARD).answer
              .certified
          ).length;
          table.settings.drift = saved;
          return n / texts.length;
        };
        const off = { ...table.settings.drift, single_p: 0, max_novelty: 1 };
        const foreignShare = share(foreign);
        const lost = share(bank, off) - share(bank);
        console.log(
          `hotel texts certified ${
            (foreignShare * 100).toFixed(1)
          }%; BANKING77 coverage lost ${(lost * 100).toFixed(2)} points`,
        );
        assert.ok(
          foreignShare <= 0.05,
          `hotel texts certified ${foreignShare}`,
        );
        assert.ok(lost <= 0.01, `BANKING77 lost ${lost}`);
      },
    );
  },
});
