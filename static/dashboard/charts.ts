/**
 * The page's two charts, drawn by uPlot: server latency over the last
 * minutes (p50 and p99, log scale) and the request rate's sparkline.
 * Colours come from the stylesheet's custom properties, so they follow the
 * light or dark scheme.
 *
 * @module
 */

import { h } from "./dom.ts";
import { fmtLatency, fmtLatencyTick, fmtSecondsAgo, isNum } from "./format.ts";
import type { Sample, SampleHistory } from "./history.ts";
import { decadeRange, decadeTicks, secondsTicks } from "./scales.ts";
import { type AlignedData, FittedChart, withAlpha } from "./uplot_chart.ts";

/** The samples as uPlot columns: seconds before the newest, then each key's values (null for gaps; log scales get no value at or below 0). */
function columns(
  samples: readonly Sample[],
  keys: readonly ("p50" | "p99" | "rate")[],
  positive: boolean,
): AlignedData {
  const last = samples.at(-1)?.t ?? 0;
  const xs = samples.map((s) => (s.t - last) / 1000);
  const ys = keys.map((k) =>
    samples.map((s) => {
      const v = s[k];
      return isNum(v) && (!positive || v > 0) ? v : null;
    })
  );
  return [xs, ...ys];
}

/**
 * Latency over the samples kept: p50 and p99 on a log scale, the time axis
 * in seconds before the newest sample, and a legend (outside the canvas)
 * with the values under the pointer, or the newest ones.
 */
export class LatencyChart {
  readonly #box: HTMLElement;
  readonly #legend: { p50: HTMLElement; p99: HTMLElement };
  readonly #chart: FittedChart;
  readonly #message: HTMLElement;
  #samples: readonly Sample[] = [];

  /** A chart in `box`, with its legend's values in `legend`. */
  constructor(
    box: HTMLElement,
    legend: { p50: HTMLElement; p99: HTMLElement },
  ) {
    this.#box = box;
    this.#legend = legend;
    this.#message = h("p", { class: "empty" });
    box.append(this.#message);
    this.#chart = new FittedChart(box, (p, width, height) => ({
      width,
      height,
      legend: { show: false },
      cursor: {
        y: false,
        drag: { x: false, y: false },
        points: { size: 7 },
      },
      scales: {
        x: {
          time: false,
          range: (_u, min, max) => [min, Math.max(max, min + 1)],
        },
        y: {
          distr: 3,
          log: 10,
          range: (_u, min, max) => decadeRange(min, max),
        },
      },
      axes: [
        {
          stroke: p.muted,
          font: p.font,
          grid: { stroke: p.line, width: 1 },
          ticks: { show: false },
          gap: 4,
          size: 24,
          splits: (u, _i, min, max) =>
            secondsTicks(
              min,
              max,
              Math.floor(u.bbox.width / devicePixelRatio / 110),
            ),
          values: (_u, splits) => splits.map(fmtSecondsAgo),
        },
        {
          stroke: p.muted,
          font: p.font,
          grid: { stroke: p.line, width: 1 },
          ticks: { show: false },
          gap: 6,
          size: 56,
          splits: (_u, _i, min, max) => decadeTicks(min, max),
          filter: (_u, splits) => splits,
          values: (_u, splits) => splits.map(fmtLatencyTick),
        },
      ],
      series: [
        { label: "time" },
        { label: "p50", stroke: p.p50, width: 2, points: { show: false } },
        {
          label: "p99",
          stroke: p.p99,
          width: 2,
          dash: [5 * devicePixelRatio, 4 * devicePixelRatio],
          points: { show: false },
        },
      ],
      hooks: {
        setCursor: [(u) => this.#showLegend(u.cursor.idx ?? null)],
      },
    }));
  }

  /** Plots `history`; until two samples have a figure, says why there is no line yet. */
  update(history: SampleHistory, hasTraffic: boolean): void {
    const samples = history.samples;
    this.#samples = samples;
    const usable = samples.filter((s) => isNum(s.p50) || isNum(s.p99));
    if (usable.length < 2) {
      this.#chart.clear();
      this.#message.hidden = false;
      this.#message.textContent = hasTraffic
        ? "Collecting samples; the chart draws from the second refresh on."
        : "No requests measured yet. The chart starts with the first decisions.";
      this.#box.removeAttribute("aria-label");
    } else {
      this.#message.hidden = true;
      this.#chart.draw(columns(samples, ["p50", "p99"], true));
      const last = usable.at(-1)!;
      const span = Math.round((samples.at(-1)!.t - samples[0]!.t) / 1000);
      this.#box.setAttribute(
        "aria-label",
        `Latency over the last ${span} s, log scale: p50 ${
          fmtLatency(last.p50)
        }, p99 ${fmtLatency(last.p99)} at the latest sample`,
      );
    }
    this.#box.dataset.samples = String(usable.length);
    this.#showLegend(null);
  }

  #showLegend(idx: number | null): void {
    const s = (idx === null ? null : this.#samples[idx]) ??
      this.#samples.at(-1);
    const p50 = fmtLatency(s?.p50);
    const p99 = fmtLatency(s?.p99);
    if (this.#legend.p50.textContent !== p50) {
      this.#legend.p50.textContent = p50;
    }
    if (this.#legend.p99.textContent !== p99) {
      this.#legend.p99.textContent = p99;
    }
  }
}

/** The request rate's sparkline: a filled line from 0 to the highest rate kept, no axes. */
export class RateSpark {
  readonly #chart: FittedChart;

  /** A sparkline filling `box`. */
  constructor(box: HTMLElement) {
    this.#chart = new FittedChart(box, (p, width, height) => ({
      width,
      height,
      legend: { show: false },
      cursor: { show: false },
      padding: [2, 1, 0, 1],
      scales: {
        x: { time: false },
        y: { range: (_u, _min, max) => [0, max > 0 ? max : 1] },
      },
      axes: [{ show: false }, { show: false }],
      series: [
        {},
        {
          stroke: p.rate,
          width: 2,
          fill: withAlpha(p.rate, 0.18),
          points: { show: false },
        },
      ],
    }));
  }

  /** Plots the rate of `history`; nothing until two samples have one. */
  update(history: SampleHistory): void {
    const samples = history.samples.filter((s) => isNum(s.rate));
    if (samples.length < 2) this.#chart.clear();
    else this.#chart.draw(columns(samples, ["rate"], false));
  }
}
