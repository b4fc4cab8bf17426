/**
 * What an operator asks of `/metrics` beside the service's counters: the
 * build (`dtable_build_info{version}`), the bundle served (its id, the
 * checksum of its manifest, as a label of `dtable_bundle_info`; when it
 * began serving and how long it took to load), reloads
 * (`dtable_reloads_total`), the current bundle's own answer counters
 * (labelled with its id, so each bundle's series stays monotonic and a
 * reload starts a new one), feedback refused for naming an option the
 * bundle lacks, and the process's memory and, where Deno lets
 * the process read them, its open descriptors (`process_*`, the names
 * Prometheus's client libraries use).
 *
 * @module
 */

import { INTERFACE_VERSION, TOOL_VERSION } from "../version.ts";
import type { Exposition } from "./exposition.ts";
import type { StatsSnapshot } from "./stats_document.ts";

/** Every family `writeOpsMetrics` may write, for dashboards and tests. */
export const OPS_METRICS = [
  "dtable_build_info",
  "dtable_bundle_info",
  "dtable_bundle_loaded_time_seconds",
  "dtable_bundle_load_duration_seconds",
  "dtable_reloads_total",
  "dtable_bundle_answers_total",
  "dtable_bundle_certified_answers_total",
  "dtable_feedback_refused_total",
  "dtable_feedback_not_labels_total",
  "dtable_drift_rule_answers_total",
  "process_resident_memory_bytes",
  "process_heap_used_bytes",
  "process_heap_total_bytes",
  "process_start_time_seconds",
  "process_open_fds",
  "process_max_fds",
] as const;

/** Writes the build, bundle, reload and process families for the stats `doc`. */
export function writeOpsMetrics(e: Exposition, doc: StatsSnapshot): void {
  e.family(
    "dtable_build_info",
    "gauge",
    "Always 1; labels: the program's version, the HTTP interface's and Deno's.",
  );
  e.sample("dtable_build_info", 1, {
    version: TOOL_VERSION,
    interface_version: INTERFACE_VERSION,
    deno: Deno.version.deno,
  });
  const bundle = { bundle_id: doc.bundle.id };
  e.family(
    "dtable_bundle_info",
    "gauge",
    "Always 1; labels: the served bundle's id (its manifest's checksum) and path.",
  );
  e.sample("dtable_bundle_info", 1, { ...bundle, path: doc.bundle.path });
  e.family(
    "dtable_bundle_loaded_time_seconds",
    "gauge",
    "When the served bundle began serving (start or reload), since the Unix epoch.",
  );
  e.sample(
    "dtable_bundle_loaded_time_seconds",
    Date.parse(doc.bundle.loaded_at) / 1000,
  );
  if (doc.bundle.load_ms !== null) {
    e.single(
      "dtable_bundle_load_duration_seconds",
      "gauge",
      "Time the served bundle took to load.",
      doc.bundle.load_ms / 1000,
    );
  }
  e.single(
    "dtable_reloads_total",
    "counter",
    "Bundle reloads since the start (SIGHUP or --watch).",
    doc.reloads.count,
  );
  e.family(
    "dtable_bundle_answers_total",
    "counter",
    "Answers given by the served bundle since it began serving.",
  );
  e.sample("dtable_bundle_answers_total", doc.bundle_counts.answers, bundle);
  e.family(
    "dtable_bundle_certified_answers_total",
    "counter",
    "Certified answers of the served bundle since it began serving.",
  );
  e.sample(
    "dtable_bundle_certified_answers_total",
    doc.bundle_counts.certified,
    bundle,
  );
  e.single(
    "dtable_feedback_refused_total",
    "counter",
    "Feedback items refused for naming an option the bundle lacks.",
    doc.counts.feedback_refused,
  );
  e.family(
    "dtable_feedback_not_labels_total",
    "counter",
    "Feedback items that were no label (a forged id, one given for another text or question), by reason.",
  );
  for (const [reason, n] of Object.entries(doc.counts.feedback_not_labels)) {
    e.sample("dtable_feedback_not_labels_total", n, { reason });
  }
  e.family(
    "dtable_drift_rule_answers_total",
    "counter",
    "Answers flagged drift, by the rule that withheld them: out_of_scope, novelty, alarm (the drift guard's), live_audit.",
  );
  for (const [rule, n] of Object.entries(doc.drift_rules)) {
    e.sample("dtable_drift_rule_answers_total", n, { rule });
  }
  writeProcess(e, doc);
}

function writeProcess(e: Exposition, doc: StatsSnapshot): void {
  const m = doc.memory;
  const descriptors = doc.descriptors;
  e.single(
    "process_resident_memory_bytes",
    "gauge",
    "Resident memory size in bytes.",
    m.rss_bytes,
  );
  e.single(
    "process_heap_used_bytes",
    "gauge",
    "JavaScript heap in use, in bytes.",
    m.heap_used_bytes,
  );
  e.single(
    "process_heap_total_bytes",
    "gauge",
    "JavaScript heap reserved, in bytes.",
    m.heap_total_bytes,
  );
  e.single(
    "process_start_time_seconds",
    "gauge",
    "Start time of the process since the Unix epoch, in seconds.",
    Date.parse(doc.started_at) / 1000,
  );
  if (descriptors.open !== null) {
    e.single(
      "process_open_fds",
      "gauge",
      "Open file descriptors.",
      descriptors.open,
    );
  }
  if (descriptors.max !== null) {
    e.single(
      "process_max_fds",
      "gauge",
      "Most open file descriptors allowed (the soft limit).",
      descriptors.max,
    );
  }
}
