/**
 * `eval --bundle A --bundle B ...`: several bundles (two versions of one,
 * say) answered the same traces, side by side: per question each bundle's
 * certified share, disagreement among certified answers and accuracy.
 *
 * @module
 */

import type { Table } from "../engine/mod.ts";
import { bundleIdOf } from "../live/mod.ts";
import type { Measurement } from "../train/mod.ts";
import type { TraceSet } from "../traces/mod.ts";

/** One bundle of a comparison. */
export interface ComparedBundle {
  /** Its column: A, B, C... in the order the bundles were given. */
  label: string;
  path: string;
  bundle_id: string;
}

/** Per question, one entry per bundle (null where that bundle lacks the question). */
export type ComparedQuestions = Record<string, (Measurement | null)[]>;

/** What `eval --json` prints when comparing. */
export interface Comparison {
  bundles: ComparedBundle[];
  traces: number;
  questions: ComparedQuestions;
}

/** The figures of one question that a comparison shows. */
function measurement(f: Measurement): Measurement {
  return {
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
 * name them.
 */
export function compareBundles(
  tables: readonly Table[],
  paths: readonly string[],
  traces: TraceSet,
  evaluate: (
    table: Table,
    traces: TraceSet,
  ) => { questions: Record<string, Measurement> },
): Comparison {
  const results = tables.map((t) => evaluate(t, traces).questions);
  const questions: ComparedQuestions = {};
  for (const q of traces.questions) {
    if (!tables.some((t) => t.byName.has(q.name))) continue;
    questions[q.name] = results.map((r) => {
      const f = r[q.name];
      return f === undefined ? null : measurement(f);
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
const pct = (x: number | null, none: string) =>
  x === null ? none : `${(x * 100).toFixed(1)}%`;

/** A comparison as a table in plain words, one block per question. */
export function comparisonLines(c: Comparison): string[] {
  const width = 16;
  const head = (label: string) => label.padEnd(width);
  const lines = [
    `${c.bundles.length} bundles on the same ${c.traces} traces:`,
    ...c.bundles.map((b) =>
      `  ${b.label}: ${b.path} (bundle id ${b.bundle_id.slice(0, 12)})`
    ),
  ];
  const rows: [string, (m: Measurement) => string][] = [
    ["answers", (m) => String(m.n)],
    ["certified", (m) => `${pct(m.coverage, "no answers")} (${m.certified})`],
    ["disagreement", (m) => pct(m.disagreement, "none certified")],
    ["  95% up to", (m) => pct(m.disagreement_upper, "none certified")],
    ["accuracy", (m) => pct(m.accuracy, "no answers")],
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
  return lines;
}
