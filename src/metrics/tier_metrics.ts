/**
 * The second tier's families in the Prometheus exposition, written only
 * while a bundle with a second tier is served: answers and certified
 * answers by the tier that answered, the second tier's asked, novel, shed
 * and failed answers, its queue, and the decision latency by tier.
 *
 * @module
 */

import { type Exposition, sampleValue } from "./exposition.ts";
import type { EncoderQueue } from "../encoder/mod.ts";
import type { TierStats } from "./tier_stats.ts";
import { EXPOSED_BOUNDS_S, type LatencyHistogram } from "./latency.ts";

const TIERS = ["table", "semantic"] as const;

/** Writes the families of the second tier served with `queue`, counted in `s` (see the module doc). */
export function writeTierMetrics(
  e: Exposition,
  queue: EncoderQueue,
  s: TierStats,
): void {
  const counts = (tier: (typeof TIERS)[number]) =>
    tier === "table" ? s.table : s.semantic;
  const byTier = (
    name: string,
    help: string,
    value: (c: ReturnType<typeof counts>) => number,
  ) => {
    e.family(name, "counter", help);
    for (const tier of TIERS) e.sample(name, value(counts(tier)), { tier });
  };
  byTier(
    "dtable_tier_answers_total",
    "Answers given, by the tier that answered (table, or the second tier: semantic).",
    (c) => c.answers,
  );
  byTier(
    "dtable_tier_certified_total",
    "Certified answers, by the tier that answered.",
    (c) => c.certified,
  );
  const single = (name: string, help: string, value: number) =>
    e.single(name, "counter", help, value);
  single(
    "dtable_semantic_asked_total",
    "Answers the second tier was asked for (the table withheld them for low confidence alone).",
    s.asked,
  );
  single(
    "dtable_semantic_novel_total",
    "Answers the second tier's novelty guard withheld (the table's answer stood).",
    s.novel,
  );
  single(
    "dtable_semantic_shed_total",
    "Decision requests shed at a full encoder queue (the table's answers went back at once).",
    s.shed,
  );
  single(
    "dtable_semantic_failed_total",
    "Decision requests whose embedding failed (the table's answers went back).",
    s.failed,
  );
  e.single(
    "dtable_semantic_in_flight",
    "gauge",
    "Texts waiting or running at the encoder.",
    queue.encoder.inFlight,
  );
  e.single(
    "dtable_semantic_queue_capacity",
    "gauge",
    "Texts the encoder's queue holds at most (--semantic-queue).",
    queue.options.queue,
  );
  const name = "dtable_tier_decision_latency_seconds";
  e.family(
    name,
    "histogram",
    "Time spent inside the server per decision request, by the tier of its answers (a request with answers of both tiers counts under both).",
  );
  for (const tier of TIERS) writeHistogram(e, name, counts(tier).latency, tier);
}

function writeHistogram(
  e: Exposition,
  name: string,
  h: LatencyHistogram,
  tier: string,
): void {
  const cumulative = h.cumulative();
  EXPOSED_BOUNDS_S.forEach((le, i) => {
    e.sample(`${name}_bucket`, cumulative[i]!, { tier, le: sampleValue(le) });
  });
  e.sample(`${name}_bucket`, cumulative[cumulative.length - 1]!, {
    tier,
    le: "+Inf",
  });
  e.sample(`${name}_sum`, h.sumSeconds, { tier });
  e.sample(`${name}_count`, h.count, { tier });
}
