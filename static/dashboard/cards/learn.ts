/**
 * The "Learning" card, shown only by a learning service (`serve --learn`):
 * the certified share and the model calls saved per stretch of traffic
 * since the start (a chart), the bound every bundle promises, the labels
 * and the next retrain, each retrain with its outcome, and the questions
 * held or not learned yet.
 *
 * @module
 */

import { byId, h } from "../dom.ts";
import { fmtClock, fmtInt, fmtPct } from "../format.ts";
import type { Stats } from "../stats.ts";
import { FittedChart } from "../uplot_chart.ts";

let chart: FittedChart | null = null;

/** The chart of the certified share and the calls saved per stretch (made on first use). */
function chartIn(box: HTMLElement): FittedChart {
  chart ??= new FittedChart(box, (p, width, height) => ({
    width,
    height,
    legend: { show: false },
    cursor: { y: false, drag: { x: false, y: false } },
    scales: { x: { time: false }, y: { range: [0, 100] } },
    axes: [
      {
        stroke: p.muted,
        font: p.font,
        grid: { stroke: p.line, width: 1 },
        ticks: { show: false },
        size: 24,
        values: (_u, splits) => splits.map((s) => `${Math.round(s)} min`),
      },
      {
        stroke: p.muted,
        font: p.font,
        grid: { stroke: p.line, width: 1 },
        ticks: { show: false },
        size: 40,
        values: (_u, splits) => splits.map((s) => `${s}%`),
      },
    ],
    series: [
      { label: "minutes" },
      { label: "certified", stroke: p.p50, width: 2, points: { show: false } },
      {
        label: "calls saved",
        stroke: p.rate,
        width: 2,
        dash: [5 * devicePixelRatio, 4 * devicePixelRatio],
        points: { show: false },
      },
    ],
  }));
  return chart;
}

/** Fills the card from `st`; hides it when the service does not learn. */
export function renderLearn(st: Stats): void {
  const card = byId("card-learn");
  const l = st.learn;
  card.hidden = l === undefined;
  if (l === undefined) return;
  const alphas = [
    ...new Set(
      st.bundle.questions.map((q) => q.alpha).filter((a) => a !== null),
    ),
  ];
  const bound = alphas.length === 0
    ? "nothing certified yet: every answer goes to the model"
    : `certified answers disagree with the model at most ${
      alphas.map((a) => fmtPct(a)).join(" / ")
    } of the time (with 95% confidence, on traffic like the calibration part)`;
  const last = l.history.at(-1);
  byId("learn-summary").replaceChildren(
    h(
      "p",
      { class: "sub" },
      `${fmtInt(l.labels)} labels · next retrain at ${
        fmtInt(l.next_retrain_at)
      }${l.running ? " · retraining now" : ""} · ${
        fmtInt(l.retrains)
      } retrains, ${fmtInt(l.swaps)} swapped in`,
    ),
    h("p", { class: "sub" }, `Bound: ${bound}.`),
    ...(l.held.length > 0
      ? [
        h(
          "p",
          { class: "sub" },
          `Held (the model answers options not learned yet): ${
            l.held.join(", ")
          }.`,
        ),
      ]
      : []),
    ...(l.unlearned.length > 0
      ? [
        h(
          "p",
          { class: "sub" },
          `Not learned yet: ${l.unlearned.join(", ")}.`,
        ),
      ]
      : []),
    ...(last === undefined ? [] : [
      h(
        "p",
        { class: "sub" },
        `Last retrain ${fmtClock(last.ended)}, on ${
          fmtInt(last.labels)
        } labels: ${
          last.swapped ? "swapped in" : "kept the bundle in force"
        } (${last.reason}).`,
      ),
    ]),
  );
  const points = l.series.filter((p) => p.decisions > 0);
  const box = byId("learn-chart");
  if (points.length < 2) return;
  const start = Date.parse(points[0]!.from);
  chartIn(box).draw([
    points.map((p) => (Date.parse(p.to) - start) / 60_000),
    points.map((p) => 100 * p.certified / p.decisions),
    points.map((p) => 100 * (p.decisions - p.calls) / p.decisions),
  ]);
  const end = points.at(-1)!;
  box.setAttribute(
    "aria-label",
    `Certified share and model calls saved per stretch since the start: ${
      fmtPct(end.certified / end.decisions)
    } certified and ${
      fmtPct((end.decisions - end.calls) / end.decisions)
    } of calls saved in the last stretch`,
  );
}
