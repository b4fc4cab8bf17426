/**
 * Counts by answering tier (the table, the second tier): answers,
 * certified answers, the second tier's shed, novel and failed requests,
 * and each tier's decision latency. Kept only by a service that serves a
 * second tier; the statistics of a table-only bundle are as before.
 *
 * @module
 */

import type { AnsweringTier } from "../engine/mod.ts";
import type { TiersStats as TiersDocument } from "../openapi/mod.ts";
import { LatencyHistogram } from "./latency.ts";

type TierCountsDocument = TiersDocument["table"];

class TierCounts {
  answers = 0;
  certified = 0;
  readonly latency = new LatencyHistogram();

  document(): TierCountsDocument {
    return {
      answers: this.answers,
      certified: this.certified,
      share_answered: this.answers === 0
        ? null
        : Math.round(this.certified / this.answers * 10_000) / 10_000,
      latency_us: this.latency.summary(),
    };
  }
}

/** The per-tier counters of a service with a second tier. */
export class TierStats {
  readonly table = new TierCounts();
  readonly semantic = new TierCounts();
  asked = 0;
  novel = 0;
  shed = 0;
  failed = 0;

  /** Records one answer given by `tier`. */
  recordAnswer(tier: AnsweringTier, certified: boolean): void {
    const c = tier === "table" ? this.table : this.semantic;
    c.answers++;
    if (certified) c.certified++;
  }

  /** Records a request's latency under each tier that answered in it. */
  recordLatency(tableAnswered: boolean, semanticAnswered: boolean, us: number) {
    if (tableAnswered) this.table.latency.record(us);
    if (semanticAnswered) this.semantic.latency.record(us);
  }

  /** The `tiers` block, with the pool's `workers`, `queue` bound and texts `inFlight`. */
  document(workers: number, queue: number, inFlight: number): TiersDocument {
    return {
      table: this.table.document(),
      semantic: {
        ...this.semantic.document(),
        asked: this.asked,
        novel: this.novel,
        shed: this.shed,
        failed: this.failed,
      },
      workers,
      queue,
      in_flight: inFlight,
    };
  }
}
