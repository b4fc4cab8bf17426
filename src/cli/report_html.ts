/**
 * The HTML report of `train --report-html` and `eval --report-html`: one
 * self-contained file (inline CSS and SVG, no script, nothing fetched) with,
 * per question, the frontier plot, the option table, why answers were not
 * certified and the advice for an uncalibrated question, and the split and
 * leakage summary of the bundle.
 *
 * @module
 */

import {
  type QuestionTable,
  questionThresholds,
  type Table,
} from "../engine/mod.ts";
import type {
  AveragesFigures,
  Confusion,
  EvalFigures,
  FrontierPoint,
  OptionFigures,
  Prf,
  TiersFigures,
} from "../eval/mod.ts";
import { frontierSvg } from "./frontier_svg.ts";
import { leakageInWords, thresholdInWords } from "./report_words.ts";
import {
  adviceInBrief,
  bundleInfo,
  questionReportOf,
  splitInWords,
} from "../train/mod.ts";
import { questionLine, streamInWords, whyNotCertified } from "./eval_words.ts";
import { percent } from "../format.ts";

/** One question of a report. */
export interface ReportQuestion {
  name: string;
  /** The summary line of its figures. */
  summary: string;
  /** Calibrated or not, and the threshold in force. */
  status: string;
  /** The target disagreement rate (drawn on the plot). */
  alpha: number;
  options: Record<string, OptionFigures> | null;
  /** What the option table was measured on. */
  optionsOn: string;
  /** Macro and weighted averages of the option figures; null when not measured. */
  averages: AveragesFigures | null;
  /** The largest confusions (reference -> the table's answer); null when not measured. */
  confusions: Confusion[] | null;
  /** Why answers were not certified (`whyNotCertified`); null when not measured. */
  notCertified:
    | { reason: string; count: number; meaning: string | null }[]
    | null;
  frontier: FrontierPoint[];
  /** What the frontier was measured on. */
  frontierOn: string;
  /** The trainer's advice when uncalibrated, else null. */
  advice: string | null;
  leakage: string | null;
  /** Extra lines (the drift alarm of `eval --stream`). */
  notes: string[];
}

/** What a report shows. */
export interface ReportModel {
  title: string;
  /** Lines under the title: what was measured. */
  about: string[];
  split: string | null;
  questions: ReportQuestion[];
}

/** The report of an `eval` run: its figures and the bundle's own training report. */
export function evalReport(
  bundlePath: string,
  table: Table,
  traces: number,
  result: {
    questions: Record<string, EvalFigures & { tiers?: TiersFigures }>;
    stream?: Record<string, { raised: number[]; cleared: number[] }>;
  },
): ReportModel {
  const bothTiers = Object.values(result.questions).some((f) =>
    f.tiers !== undefined
  );
  const report = bundleInfo(table).report ?? {};
  return {
    title: `eval of ${bundlePath}`,
    about: [
      `${traces} traces answered as serving would answer them${
        result.stream === undefined ? "" : ", through the online drift guard"
      }${
        bothTiers
          ? ", by both tiers (the second tier where the table is not sure), at the two-tier rule's threshold"
          : ""
      }.`,
    ],
    split: report.split === undefined
      ? null
      : `The bundle was trained with this split: ${
        splitInWords(report.split)
      }.`,
    questions: Object.entries(result.questions).map(([name, f]) => {
      const q = table.byName.get(name)!;
      const trained = questionReportOf(bundleInfo(table), name);
      return {
        name,
        summary: questionLine(name, f),
        status: statusInWords(q, f.tiers !== undefined),
        alpha: q.calibration.alpha,
        options: f.options,
        optionsOn: "these traces",
        averages: f.averages,
        confusions: f.confusions,
        notCertified: whyNotCertified(f),
        frontier: f.frontier,
        frontierOn: f.tiers === undefined
          ? "these traces, at the bundle's candidate thresholds"
          : "these traces, both tiers by the two-tier rule, at its candidate thresholds",
        advice: trained?.calibration?.advice ?? null,
        leakage: trained?.leakage === undefined
          ? null
          : leakageInWords(trained.leakage),
        notes: result.stream?.[name] === undefined
          ? []
          : [streamInWords(result.stream[name]!)],
      };
    }),
  };
}

/** Calibrated or not, and the threshold in force (see `thresholdInWords`). */
export function statusInWords(
  q: QuestionTable,
  secondTierServed: boolean,
): string {
  const t = questionThresholds(q, secondTierServed);
  return t.inForce === null && t.twoTier === null
    ? "uncalibrated: never certified"
    : `calibrated, ${thresholdInWords(q, secondTierServed)}`;
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Text made safe for HTML. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function table(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  cls: string,
): string {
  return `<table class="${cls}"><thead><tr>${
    header.map((h) => `<th>${escapeHtml(h)}</th>`).join("")
  }</tr></thead><tbody>${
    rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join("")}</tr>`)
      .join("")
  }</tbody></table>`;
}

function questionSection(q: ReportQuestion): string {
  const out: string[] = [];
  out.push(
    `<section class="question" id="q-${escapeHtml(q.name)}"><h2>${
      escapeHtml(q.name)
    } <span class="status">${escapeHtml(q.status)}</span></h2>`,
  );
  out.push(`<p>${escapeHtml(q.summary)}</p>`);
  if (q.advice !== null) {
    const brief = adviceInBrief(q.advice);
    out.push(
      `<div class="advice"><h3>What would help</h3>${
        brief === null ? "" : `<p><strong>${escapeHtml(brief)}</strong></p>`
      }<p>${escapeHtml(q.advice)}</p></div>`,
    );
  }
  for (const note of q.notes) out.push(`<p>${escapeHtml(note)}</p>`);
  if (q.frontier.length > 0) {
    out.push(
      `<h3>Frontier</h3><p class="on">Measured on ${
        escapeHtml(q.frontierOn)
      }. Solid: disagreement among certified answers; dotted: the smallest alpha at which each threshold alone passes the binomial test; ringed: the threshold in force.</p>`,
    );
    out.push(`<figure>${frontierSvg(q.frontier, q.alpha)}</figure>`);
    out.push(table(
      [
        "threshold",
        "certified",
        "share",
        "disagreements",
        "disagreement",
        "passes at alpha",
      ],
      q.frontier.map((p) => [
        `${p.threshold.toFixed(4)}${p.in_force ? " (in force)" : ""}`,
        String(p.certified),
        percent(p.coverage, "&ndash;"),
        String(p.disagreements),
        percent(p.disagreement, "&ndash;"),
        p.passes_at_alpha === null ? "&ndash;" : p.passes_at_alpha.toFixed(3),
      ]),
      "frontier",
    ));
  }
  if (q.options !== null) {
    out.push(
      `<h3>Options</h3><p class="on">Measured on ${
        escapeHtml(q.optionsOn)
      }: traces whose reference answer is the option, certified answers naming it, how many of those disagree, precision, recall and F1 of certified answers (an answer not certified names no option), and the same three over all answers, certified or not (&ndash;: nothing to measure).</p>`,
    );
    out.push(table(
      [
        "option",
        "answers",
        "certified",
        "disagreements",
        "precision",
        "recall",
        "F1",
        "all: precision",
        "all: recall",
        "all: F1",
      ],
      Object.entries(q.options).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
        .map(([o, f]) => [
          escapeHtml(o),
          String(f.answers),
          String(f.certified),
          String(f.disagreements),
          percent(f.precision, "&ndash;"),
          percent(f.recall, "&ndash;"),
          percent(f.f1, "&ndash;"),
          percent(f.all_answers.precision, "&ndash;"),
          percent(f.all_answers.recall, "&ndash;"),
          percent(f.all_answers.f1, "&ndash;"),
        ]),
      "options",
    ));
  }
  if (q.averages !== null) {
    const row = (name: string, p: Prf) => [
      name,
      percent(p.precision, "&ndash;"),
      percent(p.recall, "&ndash;"),
      percent(p.f1, "&ndash;"),
    ];
    const { certified, all_answers } = q.averages;
    out.push(
      `<h3>Averages</h3><p class="on">Macro: the plain mean over options; weighted: weighted by each option's answers (as scikit-learn's classification_report). An option whose figure is undefined is left out of that figure's average.</p>`,
    );
    out.push(table(
      ["average", "precision", "recall", "F1"],
      [
        row("macro, certified answers", certified.macro),
        row("weighted, certified answers", certified.weighted),
        row("macro, all answers", all_answers.macro),
        row("weighted, all answers", all_answers.weighted),
      ],
      "averages",
    ));
  }
  if (q.confusions !== null) {
    out.push(
      `<h3>Largest confusions</h3>${
        q.confusions.length === 0
          ? "<p>None: every answer agrees with the reference.</p>"
          : `<p class="on">Over all answers: the reference answer, the table's answer, how many times, their share of the reference's answers, and how many of them were certified.</p>${
            table(
              ["reference", "table's answer", "count", "share", "certified"],
              q.confusions.map((c) => [
                escapeHtml(c.reference),
                c.answer === null ? "(none)" : escapeHtml(c.answer),
                String(c.count),
                percent(c.share, "&ndash;"),
                String(c.certified),
              ]),
              "confusions",
            )
          }`
      }`,
    );
  }
  if (q.notCertified !== null) {
    const why = q.notCertified;
    out.push(
      `<h3>Not certified</h3>${
        why.length === 0 ? "<p>Every answer was certified.</p>" : table(
          ["why", "answers"],
          why.map((w) => [
            escapeHtml(
              w.meaning === null ? w.reason : `${w.reason} (${w.meaning})`,
            ),
            String(w.count),
          ]),
          "flags",
        )
      }`,
    );
  }
  if (q.leakage !== null) {
    out.push(`<h3>Leakage check</h3><p>${escapeHtml(q.leakage)}</p>`);
  }
  out.push("</section>");
  return out.join("\n");
}

const STYLE = `
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 920px; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.25em; border-top: 1px solid #ccc; padding-top: 0.8em; }
h3 { font-size: 1.05em; margin-bottom: 0.3em; }
.status { font-weight: normal; font-size: 0.8em; color: #555; }
table { border-collapse: collapse; margin: 0.4em 0 1em; }
th, td { padding: 0.2em 0.7em; border-bottom: 1px solid #e3e3e3; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.advice { background: #fff6e0; border-left: 4px solid #e0a000; padding: 0.2em 1em; }
.on { color: #555; font-size: 0.92em; }
svg .tick { font-size: 11px; fill: #444; } svg .label { font-size: 12px; fill: #222; }
`;

/** The report as one self-contained HTML page. */
export function reportHtml(model: ReportModel): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(model.title)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${escapeHtml(model.title)}</h1>
${model.about.map((a) => `<p>${escapeHtml(a)}</p>`).join("\n")}
${model.split === null ? "" : `<p class="split">${escapeHtml(model.split)}</p>`}
${model.questions.map(questionSection).join("\n")}
</body>
</html>
`;
}
