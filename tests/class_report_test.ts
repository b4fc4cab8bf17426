/**
 * The classification report's arithmetic (`src/eval/class_report.ts`):
 * hand-computed figures on a small example, and the same example given to
 * scikit-learn (when python3 with sklearn is installed) must agree.
 */

import assert from "node:assert/strict";
import {
  averagesOf,
  type ConfusionCell,
  largestConfusions,
  type OptionCounts,
  prfOf,
} from "../src/eval/class_report.ts";
import { skipped } from "./_tools.ts";

const OPTIONS = ["a", "b", "c", "d"] as const;
/** The reference answers. */
const REFERENCE = ["a", "a", "a", "a", "b", "b", "b", "c", "c", "d"];
/** The table's answers. */
const ANSWERS = ["a", "a", "b", "c", "b", "b", "a", "c", "b", "d"];
/** Which of the table's answers were certified. */
const CERTIFIED = [1, 1, 0, 1, 1, 0, 1, 1, 0, 0].map((x) => x === 1);

/** Per option counts of `answers` against `REFERENCE`; a null answer names nothing. */
function countsOf(answers: readonly (string | null)[]): OptionCounts[] {
  return OPTIONS.map((o) => {
    let support = 0, named = 0, agreeing = 0;
    answers.forEach((a, i) => {
      if (REFERENCE[i] === o) support++;
      if (a === o) {
        named++;
        if (REFERENCE[i] === o) agreeing++;
      }
    });
    return { support, named, agreeing };
  });
}

const ALL = countsOf(ANSWERS);
/** An answer not certified names no option. */
const SERVED = countsOf(ANSWERS.map((a, i) => CERTIFIED[i] ? a : null));

const close = (got: number | null, want: number | null, what: string) => {
  if (want === null || got === null) return assert.equal(got, want, what);
  assert.ok(Math.abs(got - want) < 1e-12, `${what}: ${got} != ${want}`);
};

Deno.test("prfOf() gives the hand-computed precision, recall and F1 of every option", () => {
  // a: 4 references, named 3 times, 2 right; b: 3, 4, 2; c: 2, 2, 1; d: 1, 1, 1.
  const want = [
    [2 / 3, 2 / 4, 4 / 7],
    [2 / 4, 2 / 3, 4 / 7],
    [1 / 2, 1 / 2, 1 / 2],
    [1, 1, 1],
  ];
  ALL.forEach((c, i) => {
    const f = prfOf(c);
    close(f.precision, want[i]![0]!, `${OPTIONS[i]} precision`);
    close(f.recall, want[i]![1]!, `${OPTIONS[i]} recall`);
    close(f.f1, want[i]![2]!, `${OPTIONS[i]} f1`);
  });
});

Deno.test("prfOf() leaves undefined figures null and F1 0 when one side is empty", () => {
  assert.deepEqual(prfOf({ support: 0, named: 0, agreeing: 0 }), {
    precision: null,
    recall: null,
    f1: null,
  });
  assert.deepEqual(prfOf({ support: 2, named: 0, agreeing: 0 }), {
    precision: null,
    recall: 0,
    f1: 0,
  });
  assert.deepEqual(prfOf({ support: 0, named: 2, agreeing: 0 }), {
    precision: 0,
    recall: null,
    f1: 0,
  });
  assert.throws(
    () => prfOf({ support: 1, named: 2, agreeing: 2 }),
    RangeError,
  );
});

Deno.test("averagesOf() gives the hand-computed macro and support-weighted averages", () => {
  const a = averagesOf(ALL);
  close(a.macro.precision, (2 / 3 + 1 / 2 + 1 / 2 + 1) / 4, "macro precision");
  close(a.macro.recall, (1 / 2 + 2 / 3 + 1 / 2 + 1) / 4, "macro recall");
  close(a.macro.f1, (4 / 7 + 4 / 7 + 1 / 2 + 1) / 4, "macro f1");
  close(
    a.weighted.precision,
    (4 * 2 / 3 + 3 / 2 + 2 / 2 + 1) / 10,
    "weighted precision",
  );
  // Weighted recall is the accuracy: 6 of 10 agree.
  close(a.weighted.recall, 0.6, "weighted recall");
  close(a.weighted.f1, (4 * 4 / 7 + 3 * 4 / 7 + 2 / 2 + 1) / 10, "weighted f1");
});

Deno.test("averagesOf() leaves an option out of an average where its figure is undefined", () => {
  // d is never certified: its precision is undefined and left out.
  const a = averagesOf(SERVED);
  close(a.macro.precision, (2 / 3 + 1 + 1 / 2) / 3, "macro precision");
  close(
    a.weighted.precision,
    (4 * 2 / 3 + 3 * 1 + 2 / 2) / 9,
    "weighted precision",
  );
  close(a.macro.recall, (1 / 2 + 1 / 3 + 1 / 2 + 0) / 4, "macro recall");
  close(a.macro.f1, (4 / 7 + 1 / 2 + 1 / 2 + 0) / 4, "macro f1");
  assert.deepEqual(averagesOf([]), {
    macro: { precision: null, recall: null, f1: null },
    weighted: { precision: null, recall: null, f1: null },
  });
});

Deno.test("largestConfusions() lists the off-diagonal cells by count, with shares and certified counts", () => {
  const cells = new Map<string, Map<string | null, ConfusionCell>>();
  const support = new Map<string, number>();
  REFERENCE.forEach((r, i) => {
    support.set(r, (support.get(r) ?? 0) + 1);
    let row = cells.get(r);
    if (row === undefined) cells.set(r, row = new Map());
    const cell = row.get(ANSWERS[i]!) ?? { count: 0, certified: 0 };
    cell.count++;
    if (CERTIFIED[i]) cell.certified++;
    row.set(ANSWERS[i]!, cell);
  });
  // One more a -> c, and a question the table could not answer (null).
  cells.get("a")!.set("c", { count: 2, certified: 1 });
  cells.get("d")!.set(null, { count: 1, certified: 0 });
  support.set("a", 5);
  support.set("d", 2);
  assert.deepEqual(largestConfusions(cells, support, 10), [
    { reference: "a", answer: "c", count: 2, share: 2 / 5, certified: 1 },
    { reference: "a", answer: "b", count: 1, share: 1 / 5, certified: 0 },
    { reference: "b", answer: "a", count: 1, share: 1 / 3, certified: 1 },
    { reference: "c", answer: "b", count: 1, share: 1 / 2, certified: 0 },
    { reference: "d", answer: null, count: 1, share: 1 / 2, certified: 0 },
  ]);
  assert.equal(largestConfusions(cells, support, 2).length, 2);
});

/** A python3 that imports sklearn, or null (with a printed reason). */
const python = (() => {
  for (const command of ["/usr/bin/python3", "python3"]) {
    try {
      const out = new Deno.Command(command, {
        args: ["-c", "import sklearn"],
        stdout: "null",
        stderr: "null",
      }).outputSync();
      if (out.success) return command;
    } catch {
      // Not this one.
    }
  }
  skipped(
    "class_report_test.ts",
    "no python3 with scikit-learn (Debian: python3-sklearn)",
  );
  return null;
})();

/**
 * scikit-learn's figures for `answers` against `REFERENCE`: per option
 * precision, recall, F1, and the macro and weighted averages of each over
 * the options where that figure is defined (scikit-learn 1.2 has no
 * `zero_division=np.nan`, so the averages are asked for over those
 * options only, which is what nan does in later releases).
 */
async function sklearnFigures(answers: readonly string[]) {
  const script = `
import json, sys
from sklearn.metrics import precision_recall_fscore_support as prfs
d = json.load(sys.stdin)
y, p, labels = d["reference"], d["answers"], d["labels"]
per = prfs(y, p, labels=labels, zero_division=0)
out = {"per": [[float(per[k][i]) for k in range(3)] for i in range(len(labels))]}
for avg in ("macro", "weighted"):
    figs = []
    for k in range(3):
        defined = [l for i, l in enumerate(labels) if d["defined"][k][i]]
        figs.append(float(prfs(y, p, labels=defined, average=avg, zero_division=0)[k]))
    out[avg] = figs
print(json.dumps(out))
`;
  const counts = countsOf(
    answers.map((a) => OPTIONS.includes(a as "a") ? a : null),
  );
  const figures = counts.map(prfOf);
  const child = new Deno.Command(python!, {
    args: ["-c", script],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(JSON.stringify({
    reference: REFERENCE,
    answers,
    labels: OPTIONS,
    defined: [
      figures.map((f) => f.precision !== null),
      figures.map((f) => f.recall !== null),
      figures.map((f) => f.f1 !== null),
    ],
  })));
  await writer.close();
  const out = await child.output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return {
    counts,
    figures,
    sk: JSON.parse(new TextDecoder().decode(out.stdout)) as {
      per: number[][];
      macro: number[];
      weighted: number[];
    },
  };
}

Deno.test({
  name:
    "prfOf() and averagesOf() agree with scikit-learn's precision_recall_fscore_support, over all answers and over certified ones",
  ignore: python === null,
  fn: async (t) => {
    for (
      const [what, answers] of [
        ["all answers", ANSWERS],
        // Uncertified answers become a label outside the options, as a deferral.
        ["certified answers", ANSWERS.map((a, i) => CERTIFIED[i] ? a : "-")],
      ] as const
    ) {
      await t.step(what, async () => {
        const { counts, figures, sk } = await sklearnFigures(answers);
        figures.forEach((f, i) => {
          const [p, r, f1] = sk.per[i]!;
          // scikit-learn says 0 where ours is undefined (null).
          close(f.precision ?? 0, p!, `${OPTIONS[i]} precision`);
          close(f.recall ?? 0, r!, `${OPTIONS[i]} recall`);
          close(f.f1 ?? 0, f1!, `${OPTIONS[i]} f1`);
        });
        const a = averagesOf(counts);
        for (const avg of ["macro", "weighted"] as const) {
          close(a[avg].precision, sk[avg][0]!, `${avg} precision`);
          close(a[avg].recall, sk[avg][1]!, `${avg} recall`);
          close(a[avg].f1, sk[avg][2]!, `${avg} f1`);
        }
      });
    }
  },
});
