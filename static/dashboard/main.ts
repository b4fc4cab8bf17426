/**
 * The dashboard page's script: polls `GET /v1/stats` and shows it, and
 * wires the playground. Built into `static/dashboard.bundle.js` by
 * `deno task build:dashboard`; `static/mod.ts` inlines that file into the
 * page after the vendored uPlot.
 *
 * @module
 */

import { renderDrift } from "./cards/drift.ts";
import { renderHeader, showStatus } from "./cards/header.ts";
import { renderKpis } from "./cards/kpis.ts";
import { renderLearn } from "./cards/learn.ts";
import { renderLive } from "./cards/live.ts";
import { renderQuestions } from "./cards/questions.ts";
import { renderTiers } from "./cards/tiers.ts";
import { renderReasons } from "./cards/reasons.ts";
import { RecentCard } from "./cards/recent.ts";
import { LatencyChart, RateSpark } from "./charts.ts";
import { byId } from "./dom.ts";
import { SampleHistory } from "./history.ts";
import { QuestionPicker, startPlayground } from "./playground.ts";
import { startPolling } from "./poll.ts";
import type { Stats } from "./stats.ts";

const history = new SampleHistory();
const latency = new LatencyChart(byId("latency-chart"), {
  p50: byId("lg-p50"),
  p99: byId("lg-p99"),
});
const rate = new RateSpark(byId("rate-spark"));
const recent = new RecentCard();
const picker = new QuestionPicker();

function show(st: Stats): void {
  history.add(st);
  renderHeader(st);
  renderKpis(st);
  renderQuestions(st);
  renderReasons(st);
  renderDrift(st);
  renderLive(st);
  renderTiers(st);
  renderLearn(st);
  recent.render(st);
  picker.render(st);
  latency.update(history, (st.latency_us?.count ?? 0) > 0);
  rate.update(history);
}

byId("empty-example").textContent =
  `curl -s ${location.origin}/v1/decide \\\n` +
  `  -H 'content-type: application/json' \\\n` +
  `  -d '{"state": "I lost my card, what now?"}'`;
startPlayground();
startPolling({ onStats: show, onStatus: showStatus });
