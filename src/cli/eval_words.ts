/**
 * `eval`'s figures in words: a line per question, then compact tables of
 * the options, why answers were not certified, and the frontier. A figure
 * that is undefined (a share of nothing) is said in words, never `n/a`.
 *
 * @module
 */

import type {
  Averages,
  AveragesFigures,
  Confusion,
  EvalFigures,
  FrontierPoint,
  OptionFigures,
  Prf,
  TiersFigures,
} from "../eval/mod.ts";
import { percent } from "../format.ts";

/** A share as a percentage with one decimal. */

/** A table as aligned text: the first column left-aligned, the others right. */
export function textTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  indent = "  ",
): string[] {
  const widths = header.map((h, c) =>
    Math.max(h.length, ...rows.map((r) => r[c]!.length))
  );
  const line = (cells: readonly string[]) =>
    indent +
    cells.map((cell, c) =>
      c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!)
    ).join("  ").trimEnd();
  return [line(header), ...rows.map(line)];
}

/** The one-line summary of a question. */
export function questionLine(name: string, f: EvalFigures): string {
  const parts = [`${name}: ${f.n} answers`];
  if (f.n === 0) return `${name}: no answers to measure`;
  parts.push(`${f.certified} certified (${percent(f.coverage!)})`);
  if (f.certified === 0) {
    parts.push("so no disagreement rate to measure");
  } else {
    parts.push(
      `${f.disagreements} disagreements (${
        percent(f.disagreement!)
      } of certified, 95% CI up to ${percent(f.disagreement_upper!)})`,
    );
  }
  parts.push(`accuracy ${percent(f.accuracy!)} over all answers`);
  if (f.unlearned_answers > 0) {
    parts.push(
      `${f.unlearned_answers} answers name options the bundle never learned`,
    );
  }
  return parts.join(", ");
}

/** What each rule of the drift guard means, as a reason an answer was not certified. */
const DRIFT_RULES: Record<string, [string, string]> = {
  out_of_scope: ["out_of_scope", "looks like none of the options"],
  novelty: ["novelty", "mostly words never seen in training"],
  alarm: ["drift alarm", "the stream moved away from the calibration texts"],
  live_audit: ["live_audit", "withdrawn by live audits"],
};

/**
 * Why answers were not certified: counts by flag, most first, the flag
 * `drift` split into the rule that withheld each (out of scope and novelty
 * are single texts unlike the calibration texts, named as such; only the
 * online alarm, with `--stream`, says the stream drifted), each with what
 * it means when that is not plain from its name.
 */
export function whyNotCertified(
  f: Pick<EvalFigures, "not_certified" | "drift_rules">,
): { reason: string; count: number; meaning: string | null }[] {
  const out: { reason: string; count: number; meaning: string | null }[] = [];
  for (const [flag, n] of Object.entries(f.not_certified)) {
    if (flag !== "drift") {
      out.push({ reason: flag, count: n, meaning: null });
      continue;
    }
    let counted = 0;
    for (const [rule, m] of Object.entries(f.drift_rules)) {
      const [name, meaning] = DRIFT_RULES[rule] ?? [rule, null];
      out.push({ reason: name, count: m, meaning });
      counted += m;
    }
    if (n > counted) {
      out.push({ reason: "drift", count: n - counted, meaning: null });
    }
  }
  return out.sort((a, b) => b.count - a.count);
}

/** Why answers were not certified, in one line (see `whyNotCertified`). */
export function notCertifiedLine(f: EvalFigures): string {
  const why = whyNotCertified(f);
  if (why.length === 0) return "  not certified: none";
  return `  not certified: ${
    why.map((w) =>
      `${w.reason} ${w.count}${w.meaning === null ? "" : ` (${w.meaning})`}`
    ).join(", ")
  }`;
}

/** A share, or `-` when undefined. */
function cell(x: number | null): string {
  return x === null ? "-" : percent(x);
}

/** The options table, sorted by label: answers, certified, disagreements, precision, recall, F1. */
export function optionLines(
  options: Record<string, OptionFigures>,
): string[] {
  // By label, as scikit-learn's classification_report.
  const sorted = Object.entries(options).sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0
  );
  const rows = sorted.map(([o, f]) => [
    o,
    String(f.answers),
    String(f.certified),
    String(f.disagreements),
    cell(f.precision),
    cell(f.recall),
    cell(f.f1),
  ]);
  return textTable(
    ["option", "answers", "certified", "disagree", "precision", "recall", "f1"],
    rows,
    "    ",
  );
}

/** Precision, recall and F1 in a few words. */
function prfWords(f: Prf): string {
  return `precision ${cell(f.precision)}, recall ${cell(f.recall)}, f1 ${
    cell(f.f1)
  }`;
}

/** The macro and weighted averages in one line. */
function averagesWords(a: Averages): string {
  return `macro ${prfWords(a.macro)}; weighted ${prfWords(a.weighted)}`;
}

/** The averages of certified answers and of all answers, a line each. */
export function averagesLines(a: AveragesFigures): string[] {
  return [
    `  averages of certified answers: ${averagesWords(a.certified)}`,
    `  over all answers, certified or not: ${averagesWords(a.all_answers)}`,
  ];
}

/** The confusions table: reference -> the table's answer, count, share of the reference's answers, certified. */
export function confusionLines(confusions: readonly Confusion[]): string[] {
  return textTable(
    ["reference -> table's answer", "count", "share", "certified"],
    confusions.map((c) => [
      `${c.reference} -> ${c.answer ?? "(none)"}`,
      String(c.count),
      percent(c.share),
      String(c.certified),
    ]),
    "    ",
  );
}

/** The frontier table: at each threshold, certified share, disagreement, the alpha it passes at. */
export function frontierLines(frontier: readonly FrontierPoint[]): string[] {
  const rows = frontier.map((p) => [
    `${p.threshold.toFixed(4)}${p.in_force ? " *" : ""}`,
    p.coverage === null ? "-" : percent(p.coverage),
    p.disagreement === null ? "-" : percent(p.disagreement),
    p.passes_at_alpha === null ? "-" : p.passes_at_alpha.toFixed(3),
  ]);
  return textTable(
    ["threshold", "certified", "disagree", "passes at alpha"],
    rows,
    "    ",
  );
}

/** Every line `eval` prints for its figures. */
export function evalInWords(
  questions: Record<string, EvalFigures & { tiers?: TiersFigures }>,
  stream?: Record<string, { raised: number[]; cleared: number[] }>,
): string[] {
  const out: string[] = [];
  for (const [name, f] of Object.entries(questions)) {
    out.push(questionLine(name, f));
    out.push(notCertifiedLine(f));
    if (f.tiers !== undefined) out.push(tiersInWords(f.tiers));
    out.push(
      "  per option (precision, recall and f1 of certified answers: an answer not certified names no option):",
    );
    out.push(...optionLines(f.options));
    out.push(...averagesLines(f.averages));
    if (f.confusions.length === 0) {
      out.push("  largest confusions: none");
    } else {
      out.push(
        "  largest confusions over all answers (share: of the reference's answers; certified: how many of them were served):",
      );
      out.push(...confusionLines(f.confusions));
    }
    if (f.frontier.length > 0) {
      out.push(
        "  frontier (* the threshold in force; passes at alpha: the smallest --alpha at which that threshold alone passes the test on these traces):",
      );
      out.push(...frontierLines(f.frontier));
    }
    const ev = stream?.[name];
    if (ev !== undefined) out.push(`  ${streamInWords(ev)}`);
  }
  if (Object.values(questions).some((f) => f.frontier.length > 0)) {
    out.push(
      "('-': nothing to measure there. A threshold picked from this table is only as good as the traces it was read on: choose --alpha before looking, and let train pick the threshold on its own calibration split.)",
    );
  }
  return out;
}

/** When the online drift alarm was raised and cleared, in words. */
export function streamInWords(ev: { raised: number[]; cleared: number[] }) {
  if (ev.raised.length === 0) {
    return "drift alarm: never raised over these traces";
  }
  const cleared = ev.cleared.length === 0
    ? "not cleared by the last trace"
    : `cleared at request ${ev.cleared.join(", ")}`;
  return `drift alarm: raised at request ${ev.raised.join(", ")}; ${cleared}`;
}

/** The figures by tier in words, one line. */
export function tiersInWords(f: TiersFigures): string {
  const s = f.semantic;
  return `  by tier: table ${f.table.certified} of ${f.table.answers} certified (disagreement ${
    percent(f.table.disagreement, "-")
  }); second tier asked ${s.asked} (${s.novel} novel), ${s.certified} of ${s.answers} certified (disagreement ${
    percent(s.disagreement, "-")
  })`;
}
