/**
 * The service's statistics in the Prometheus text exposition (written with
 * `exposition.ts`, the live certificate's families after them by
 * `live_routes/live_metrics.ts`).
 *
 * Names follow Prometheus conventions: a `dtable_` prefix, counters end in
 * `_total`, durations are in seconds, the latency histogram has
 * `_bucket`/`_sum`/`_count`. Label values are only question names, flags,
 * route paths and status codes, so the series stay few.
 *
 * @module
 */

import {
  type DriftMonitor,
  type DriftState,
  type Table,
  type TableState,
  thresholdInForce,
} from "../engine/mod.ts";
import { type Exposition, type MetricType, sampleValue } from "./exposition.ts";
import type { StatsSnapshot } from "./stats_document.ts";
import { EXPOSED_BOUNDS_S } from "./latency.ts";
import { writeOpsMetrics } from "./ops_metrics.ts";
import type { ServiceStats } from "./service_stats.ts";

/**
 * Writes the service's counters, latency and drift state, and the
 * thresholds in force of `table` served with `state`.
 */
export function writeServiceMetrics(
  e: Exposition,
  stats: ServiceStats,
  table: Table,
  state: TableState,
  monitor: DriftMonitor,
): void {
  const doc = stats.snapshot();
  e.single(
    "dtable_start_time_seconds",
    "gauge",
    "Start time of the service since the Unix epoch, in seconds.",
    stats.startedAt / 1000,
  );
  writeRequestCounts(e, stats);
  writeAnswerCounts(e, doc);
  e.single(
    "dtable_playground_requests_total",
    "counter",
    "Playground requests answered (never decisions).",
    doc.counts.playground,
  );
  writeLatency(e, stats);
  e.single(
    "dtable_decision_requests_per_second",
    "gauge",
    "Decision requests per second over the last 10 seconds.",
    doc.rate.requests_per_s,
  );
  e.family(
    "dtable_question_threshold",
    "gauge",
    "Certified confidence threshold in force per calibrated question.",
  );
  for (const q of table.questions) {
    const threshold = thresholdInForce(table, state, q.name);
    if (threshold !== null) {
      e.sample("dtable_question_threshold", threshold, { question: q.name });
    }
  }
  writeDrift(e, table, monitor);
  writeOpsMetrics(e, doc);
  writeTransport(e, doc);
}

/** Accept failures of the listener, re-listens and per-client refusals. */
function writeTransport(e: Exposition, doc: StatsSnapshot): void {
  const t = doc.transport;
  e.single(
    "dtable_accept_errors_total",
    "counter",
    "Times the listener could not accept a connection (such as too many open files).",
    t.accept_errors,
  );
  e.single(
    "dtable_listener_restarts_total",
    "counter",
    "Times the address was listened on again after the listener failed.",
    t.listener_restarts,
  );
  e.single(
    "dtable_client_body_refusals_total",
    "counter",
    "Requests refused because their client address had too many bodies arriving.",
    t.client_body_refusals,
  );
}

/** HTTP responses by route and status, and decision requests by route. */
function writeRequestCounts(e: Exposition, stats: ServiceStats): void {
  e.family(
    "dtable_http_responses_total",
    "counter",
    "HTTP responses by route and status code.",
  );
  for (const [route, code, n] of stats.responses()) {
    e.sample("dtable_http_responses_total", n, { route, code: String(code) });
  }
  e.family(
    "dtable_decision_requests_total",
    "counter",
    "Decision requests answered, by route.",
  );
  for (const [route, n] of stats.requestsByRoute()) {
    e.sample("dtable_decision_requests_total", n, { route });
  }
}

/** Answers given, certified and deferred: in all, and per bundle question. */
function writeAnswerCounts(e: Exposition, doc: StatsSnapshot): void {
  e.single(
    "dtable_answers_total",
    "counter",
    "Answers given, one per question asked.",
    doc.counts.answers,
  );
  e.single(
    "dtable_certified_answers_total",
    "counter",
    "Answers given with certified true.",
    doc.counts.certified,
  );
  e.family(
    "dtable_deferred_answers_total",
    "counter",
    "Answers given with certified false, by flag.",
  );
  for (const [flag, n] of Object.entries(doc.deferral_reasons)) {
    e.sample("dtable_deferred_answers_total", n, { flag });
  }
  const perQuestion = Object.entries(doc.per_question);
  e.family(
    "dtable_question_answers_total",
    "counter",
    "Answers given per bundle question.",
  );
  for (const [question, c] of perQuestion) {
    e.sample("dtable_question_answers_total", c.answers, { question });
  }
  e.family(
    "dtable_question_certified_answers_total",
    "counter",
    "Certified answers per bundle question.",
  );
  for (const [question, c] of perQuestion) {
    e.sample("dtable_question_certified_answers_total", c.certified, {
      question,
    });
  }
  e.family(
    "dtable_question_deferred_answers_total",
    "counter",
    "Uncertified answers per bundle question and flag.",
  );
  for (const [question, c] of perQuestion) {
    for (const [flag, n] of Object.entries(c.flags)) {
      e.sample("dtable_question_deferred_answers_total", n, { question, flag });
    }
  }
}

/** The latency histogram of decision requests, in seconds. */
function writeLatency(e: Exposition, stats: ServiceStats): void {
  const name = "dtable_decision_latency_seconds";
  e.family(
    name,
    "histogram",
    "Time spent inside the server per decision request.",
  );
  const cumulative = stats.latency.cumulative();
  EXPOSED_BOUNDS_S.forEach((le, i) => {
    e.sample(`${name}_bucket`, cumulative[i]!, { le: sampleValue(le) });
  });
  e.sample(`${name}_bucket`, cumulative[cumulative.length - 1]!, {
    le: "+Inf",
  });
  e.sample(`${name}_sum`, stats.latency.sumSeconds);
  e.sample(`${name}_count`, stats.latency.count);
}

/** A per-question family of the drift guard's state. */
type DriftFamily = [
  name: string,
  type: MetricType,
  help: string,
  value: (s: DriftState) => number,
];

const DRIFT_FAMILIES: readonly DriftFamily[] = [
  [
    "dtable_drift_alarm",
    "gauge",
    "1 while the drift guard withholds certification of the question.",
    (s) => s.status === "alarmed" ? 1 : 0,
  ],
  [
    "dtable_drift_evidence",
    "gauge",
    "Current value of the drift test martingale.",
    (s) => s.evidence,
  ],
  [
    "dtable_drift_alarm_level",
    "gauge",
    "Evidence at which the drift alarm is raised (2/delta).",
    (s) => s.alarm_level,
  ],
  [
    "dtable_drift_observed_total",
    "counter",
    "Texts the drift guard has scored.",
    (s) => s.observed,
  ],
  [
    "dtable_drift_alarms_total",
    "counter",
    "Drift alarms raised.",
    (s) => s.alarms,
  ],
  [
    "dtable_drift_clears_total",
    "counter",
    "Drift alarms cleared.",
    (s) => s.clears,
  ],
];

/** The drift guard's state per question. */
function writeDrift(e: Exposition, table: Table, monitor: DriftMonitor): void {
  const drift = table.questions.map((q) =>
    [q.name, monitor.state(q.name)] as const
  );
  for (const [name, type, help, value] of DRIFT_FAMILIES) {
    e.family(name, type, help);
    for (const [question, s] of drift) e.sample(name, value(s), { question });
  }
}
