/**
 * The "Learning" card, shown only by a learning service (`serve --learn`):
 * the certified share and the model calls saved per stretch of traffic
 * since the start (a chart), the bound every bundle promises, the labels
 * and the next retrain, each retrain with its outcome, and the questions
 * held or not learned yet. In a learning fleet, which replica learns and
 * each replica's share of the pooled labels and picks.
 *
 * @module
 */

import { byId, h } from "../dom.ts";
import { elapsedTicks, fmtClock, fmtInt, fmtPct } from "../format.ts";
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
        values: (_u, splits) => elapsedTicks(splits),
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

/** `seconds` as "about 40 s", "about 6 min" or "about 2 h". */
function about(seconds: number): string {
  if (seconds < 90) return `about ${Math.max(1, Math.round(seconds))} s`;
  if (seconds < 90 * 60) return `about ${Math.round(seconds / 60)} min`;
  return `about ${(seconds / 3600).toFixed(1)} h`;
}

/** Fills the card from `st`; hides it when the service does not learn, and puts it first when it does. */
export function renderLearn(st: Stats): void {
  const card = byId("card-learn");
  const l = st.learn;
  card.hidden = l === undefined;
  if (l === undefined) return;
  // A learning service leads with learning.
  const grid = card.parentElement;
  if (grid !== null && grid.firstElementChild !== card) grid.prepend(card);
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
  const decisions = l.series.reduce((n, p) => n + p.decisions, 0);
  const calls = l.series.reduce((n, p) => n + p.calls, 0);
  const eta = l.next_retrain_in_s === null || l.next_retrain_in_s === undefined
    ? ""
    : ` (${about(l.next_retrain_in_s)} at ${l.labels_per_s} labels a second)`;
  const advice = Object.entries(l.advice ?? {}).map(([q, n]) => {
    const { low: lo, high: hi } = n.more_labels;
    if (hi === 0) {
      return `${q}: the labels the learning curve last asked for have come; the next retrain reads it again`;
    }
    const labels = hi === null
      ? `over ${fmtInt(lo)} more labels`
      : `about ${fmtInt(lo)}-${fmtInt(hi)} more labels`;
    const minutes = n.minutes === null
      ? ""
      : `, ${
        n.minutes.high === null
          ? `over ${fmtInt(n.minutes.low)}`
          : `${fmtInt(n.minutes.low)}-${fmtInt(n.minutes.high)}`
      } min at the current pace`;
    return `${q}: ${labels}${minutes}`;
  });
  const fleet = l.fleet;
  const shares = Object.entries(fleet?.replicas ?? {}).map(([r, x]) =>
    `${r} ${fmtInt(x.labels)} labels, ${fmtInt(x.picks_answered)} of ${
      fmtInt(x.picked)
    } picks answered`
  );
  byId("learn-summary").replaceChildren(
    ...(fleet === undefined ? [] : [
      h(
        "p",
        { class: "sub", id: "learn-fleet" },
        `Fleet: ${
          l.learner
            ? `this replica (${fleet.replica}) learns`
            : fleet.learner === null
            ? "no learner has written for 30 s (the store, or a takeover)"
            : `${fleet.learner} learns (lease ${fleet.lease}); this is ${fleet.replica}`
        }${
          fleet.bundle === null
            ? ""
            : ` · fleet bundle version ${fleet.bundle.version} from ${fleet.bundle.replica}`
        }${
          fleet.outbox.waiting > 0
            ? ` · ${fmtInt(fleet.outbox.waiting)} chunks wait for the store`
            : ""
        }${shares.length === 0 ? "" : ` · ${shares.join("; ")}`}.`,
      ),
    ]),
    h(
      "p",
      { class: "sub" },
      `${fmtInt(l.labels)} labels · next retrain at ${
        fmtInt(l.next_retrain_at)
      }${eta}${l.running ? " · retraining now" : ""} · ${
        fmtInt(l.retrains)
      } retrains, ${fmtInt(l.swaps)} swapped in`,
    ),
    h(
      "p",
      { class: "sub", id: "learn-saved" },
      decisions === 0
        ? "No decisions yet."
        : `Model calls saved so far: ${fmtInt(decisions - calls)} of ${
          fmtInt(decisions)
        } decisions (${fmtPct((decisions - calls) / decisions)}).`,
    ),
    h("p", { class: "sub" }, `Bound: ${bound}.`),
    ...(advice.length === 0 ? [] : [
      h(
        "p",
        { class: "sub", id: "learn-advice" },
        `Until a question is calibrated every answer goes to the model; what would help: ${
          advice.join("; ")
        } (learning curve).`,
      ),
    ]),
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
