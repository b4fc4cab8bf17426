import assert from "node:assert/strict";
import { bundleInfo, questionReportOf } from "../src/train/bundle_info.ts";
import { reportRecord as storedReport } from "../src/bundle/codec.ts";
import { loadBundle, writeBundleAtomically } from "../src/bundle/files.ts";
import { describe } from "../src/cli/inspect.ts";
import { bundleFiles, smallTable } from "./_fixtures.ts";

Deno.test("a bundle's info reads back typed: manifest facts, training settings and the report", async () => {
  const r = smallTable();
  const dir = await Deno.makeTempDir();
  try {
    await writeBundleAtomically(dir, await bundleFiles(r));
    const table = await loadBundle(dir);
    const info = bundleInfo(table);
    assert.equal(info.format, "decision-table-bundle");
    assert.equal(typeof info.bundle_id, "string");
    assert.equal(info.training?.seed, r.report.training.seed);
    assert.deepEqual(info.training, r.report.training);
    assert.deepEqual(info.report, JSON.parse(JSON.stringify(r.report)));
    const name = r.report.questions[0]!.name;
    assert.deepEqual(
      questionReportOf(info, name)?.test,
      r.report.questions[0]!.test,
    );
    // inspect reads the same figures without a cast.
    const d = describe(table);
    assert.deepEqual(d.questions[0]!.test, r.report.questions[0]!.test);
    assert.deepEqual(d.split, JSON.parse(JSON.stringify(r.report.split)));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("storedReport() keeps a report with named questions and drops what is not one", () => {
  const ok = { alpha: 0.05, questions: [{ name: "q", test: { n: 3 } }] };
  assert.equal(storedReport(ok), ok);
  assert.deepEqual(storedReport({}), {});
  for (
    const bad of [null, 3, "report", [], { questions: {} }, {
      questions: [{ test: 1 }],
    }]
  ) {
    assert.equal(storedReport(bad), null, JSON.stringify(bad));
  }
  assert.equal(
    questionReportOf({ report: storedReport(ok) }, "q")?.test?.n,
    3,
  );
  assert.equal(questionReportOf({ report: null }, "q"), undefined);
});
