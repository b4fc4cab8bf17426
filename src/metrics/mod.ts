/**
 * What a running service counts and how it is read: the statistics kept
 * on the request path without allocating (`ServiceStats`: counters,
 * latency histograms, the request rate, recent decisions, reloads; the
 * counts by tier, `TierStats`) and turned into the `/v1/stats` document on
 * demand, with the live certificate's section (`liveStats`); and the one
 * Prometheus text writer (`Exposition`) with the families of `/metrics`,
 * each written from those same counters. It knows the documents' types
 * (from their schemas, `src/openapi/`), not the routes: the service names
 * the routes it counts.
 *
 * @example
 * ```ts
 * import { Exposition, ServiceStats, writeServiceMetrics } from "./mod.ts";
 * import { loadBundle } from "../bundle/mod.ts";
 * import { DriftMonitor, TableState } from "../engine/mod.ts";
 *
 * const table = await loadBundle("demo/bundle");
 * const state = new TableState(table);
 * const monitor = new DriftMonitor(table.settings.drift);
 * const stats = new ServiceStats({
 *   routes: { decisions: ["/v1/decide"], labels: ["/v1/decide", "other"] },
 *   table,
 *   state,
 *   monitor,
 *   bundlePath: "demo/bundle",
 * });
 * const e = new Exposition();
 * writeServiceMetrics(e, stats, table, state, monitor);
 * console.log(e.text());
 * ```
 *
 * @module
 */

export { Exposition, METRICS_CONTENT_TYPE } from "./exposition.ts";
export { round1 } from "./latency.ts";
export { writeLearnMetrics } from "./learn_metrics.ts";
export { writeLiveMetrics } from "./live_metrics.ts";
export { liveStats } from "./live_stats.ts";
export {
  RATE_WINDOW_S,
  ServiceStats,
  type StatsOptions,
} from "./service_stats.ts";
export { writeServiceMetrics } from "./service_metrics.ts";
export { writeTierMetrics } from "./tier_metrics.ts";
export { TierStats } from "./tier_stats.ts";
