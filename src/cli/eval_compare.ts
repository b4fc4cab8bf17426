/**
 * `eval --bundle A --bundle B ...`: several bundles (two versions of one,
 * say) answered the same traces, side by side: per question each bundle's
 * certified share, disagreement among certified answers and accuracy.
 *
 * @module
 */

import { questionThresholds, type Table } from "../engine/mod.ts";
import { bundleIdOf, shownBundleId } from "../live/mod.ts";
import type { Measurement } from "../train/mod.ts";
import type { TraceSet } from "../traces/mod.ts";
import { percent } from "../format.ts";

/** One bundle of a comparison. */
export interface ComparedBundle {
  /** Its column: A, B, C... in the order the bundles were given. */
  label: string;
  path: string;
  bundle_id: string;
}

/** One bundle's figures for a question in a comparison. */
export interface ComparedFigures extends Measurement {
  /** The threshold its answers were certified against (the two-tier rule's when both tiers answered). */
  threshold: number | null;
  /** Which tiers answered: the table alone, or both (a question with a second tier, embedded traces). */
  tiers: "table" | "both";
}

/** Per question, one entry per bundle (null where that bundle lacks the question). */
export type ComparedQuestions = Record<string, (ComparedFigures | null)[]>;

/** What `eval --json` prints when comparing. */
export interface Comparison {
  bundles: ComparedBundle[];
  traces: number;
  questions: ComparedQuestions;
}

/** The figures of one question that a comparison shows. */
function measurement(
  f: Measurement,
  threshold: number | null,
  tiers: "table" | "both",
): ComparedFigures {
  return {
    threshold,
    tiers,
    n: f.n,
    certified: f.certified,
    coverage: f.coverage,
    disagreements: f.disagreements,
    disagreement: f.disagreement,
    disagreement_lower: f.disagreement_lower,
    disagreement_upper: f.disagreement_upper,
    accuracy: f.accuracy,
  };
}

/**
 * Compares `tables` (loaded from `paths`) on `traces` with `evaluate`
 * (eval's own, passed in so this module stays a view of it): every
 * question some bundle has and the traces answer, in the order the traces
 * name them. `secondTier`: the traces were embedded, so a question with a
 * second tier is answered by both tiers, at the two-tier rule's threshold.
 */
export function compareBundles(
  tables: readonly Table[],
  paths: readonly string[],
  traces: TraceSet,
  evaluate: (
    table: Table,
    traces: TraceSet,
  ) => { questions: Record<string, Measurement> },
  secondTier = false,
): Comparison {
  const results = tables.map((t) => evaluate(t, traces).questions);
  const questions: ComparedQuestions = {};
  for (const q of traces.questions) {
    if (!tables.some((t) => t.byName.has(q.name))) continue;
    questions[q.name] = results.map((r, i) => {
      const f = r[q.name];
      const tq = tables[i]!.byName.get(q.name);
      if (f === undefined || tq === undefined) return null;
      const t = questionThresholds(tq, secondTier);
      const both = secondTier && t.twoTier !== null;
      return measurement(f, t.inForce, both ? "both" : "table");
    });
  }
  return {
    bundles: tables.map((t, i) => ({
      label: String.fromCharCode(65 + i),
      path: paths[i]!,
      bundle_id: bundleIdOf(t),
    })),
    traces: traces.texts.length,
    questions,
  };
}

/** A share in percent; a figure that does not exist is said in words. */

/** A comparison as a table in plain words, one block per question. */
export function comparisonLines(c: Comparison): string[] {
  const width = 16;
  const head = (label: string) => label.padEnd(width);
  const lines = [
    `${c.bundles.length} bundles on the same ${c.traces} traces:`,
    ...c.bundles.map((b) =>
      `  ${b.label}: ${b.path} (bundle id ${shownBundleId(b.bundle_id)})`
    ),
  ];
  const rows: [string, (m: ComparedFigures) => string][] = [
    ["answered by", (m) => m.tiers === "both" ? "both tiers" : "table"],
    [
      "threshold",
      (m) => m.threshold === null ? "none" : m.threshold.toFixed(4),
    ],
    ["answers", (m) => String(m.n)],
    [
      "certified",
      (m) => `${percent(m.coverage, "no answers")} (${m.certified})`,
    ],
    ["disagreement", (m) => percent(m.disagreement, "none certified")],
    ["  95% up to", (m) => percent(m.disagreement_upper, "none certified")],
    ["accuracy", (m) => percent(m.accuracy, "no answers")],
  ];
  const lacking = Object.values(c.questions).some((f) => f.includes(null));
  for (const [name, figures] of Object.entries(c.questions)) {
    lines.push(
      "",
      `${name.padEnd(16)}${c.bundles.map((b) => head(b.label)).join("")}`
        .trimEnd(),
    );
    for (const [row, show] of rows) {
      lines.push(
        `  ${row.padEnd(14)}${
          figures.map((m) => head(m === null ? "-" : show(m))).join("")
        }`.trimEnd(),
      );
    }
  }
  if (lacking) lines.push("", "(- : that bundle has no such question)");
  lines.push(
    "(threshold: the one in force, the two-tier rule's where both tiers answered)",
  );
  return lines;
}
