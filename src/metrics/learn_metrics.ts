/**
 * A learning service's learner in the Prometheus text exposition, after
 * the service's and the live certificate's families in `/metrics`
 * (`dtable_learn_` prefix, counters end in `_total`).
 *
 * @module
 */

import type { Exposition } from "./exposition.ts";
import type { LearnStats } from "../openapi/mod.ts";

/** Writes the learner's families from its `/v1/stats` section. */
export function writeLearnMetrics(e: Exposition, s: LearnStats): void {
  e.single(
    "dtable_learn_labels",
    "gauge",
    "Labels counted: feedback items written to the log.",
    s.labels,
  );
  e.single(
    "dtable_learn_next_retrain_labels",
    "gauge",
    "The labels at which the next retrain is due.",
    s.next_retrain_at,
  );
  e.single(
    "dtable_learn_running",
    "gauge",
    "1 while a retrain runs.",
    s.running ? 1 : 0,
  );
  e.single(
    "dtable_learn_retrains_total",
    "counter",
    "Retrains started.",
    s.retrains,
  );
  e.single(
    "dtable_learn_swaps_total",
    "counter",
    "Retrains whose bundle was swapped in.",
    s.swaps,
  );
  e.single(
    "dtable_learn_held_questions",
    "gauge",
    "Questions not certified while the model answers options their bundle has not learned.",
    s.held.length,
  );
  if (s.fleet !== undefined) {
    e.single(
      "dtable_learn_learner",
      "gauge",
      "1 on the replica of a learning fleet that learns now (it holds the lease).",
      s.learner ? 1 : 0,
    );
    e.single(
      "dtable_learn_outbox_waiting_chunks",
      "gauge",
      "This replica's chunks (feedback and ledger lines, retrain records) on disk that the fleet's pool does not hold yet.",
      s.fleet.outbox.waiting,
    );
    e.single(
      "dtable_learn_bundle_swaps_total",
      "counter",
      "The fleet's bundles this replica fetched from the store and swapped in.",
      s.fleet.bundle_swaps,
    );
  }
  const last = s.history.at(-1);
  if (last !== undefined) {
    e.single(
      "dtable_learn_last_retrain_seconds",
      "gauge",
      "How long the last retrain took.",
      last.seconds,
    );
  }
}
