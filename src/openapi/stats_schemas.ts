/**
 * JSON Schema of the statistics document, `GET /v1/stats` (the interface
 * leaves its fields open; these are the ones the service sends), and the
 * TypeScript types the service builds it with.
 *
 * @module
 */

import { type Static, Type } from "@sinclair/typebox";
import type { DriftState as EngineDriftState } from "../engine/mod.ts";
import type { QuestionKind } from "../engine/mod.ts";
import { LearnStats } from "./learn_schemas.ts";
import { LiveStats } from "./live_schemas.ts";
import {
  confidence,
  count,
  Flag,
  nonNegative,
  nullable,
  nullableNumber,
  oneOf,
  radius,
  recordOf,
  ref,
} from "../wire/mod.ts";
import type { Same } from "./type_equality.ts";

/** A percentile summary of latencies. */
export const LatencySummary = Type.Object({
  count,
  p50: nullableNumber,
  p90: nullableNumber,
  p99: nullableNumber,
  max: nullableNumber,
}, { description: "Microseconds; null before any request." });

/** Percentile summary in microseconds; null where no value was recorded. */
export type LatencySummary = Static<typeof LatencySummary>;

/** One tier's counts. */
const TierCounts = {
  answers: count,
  certified: count,
  share_answered: nullableNumber,
  latency_us: ref("LatencySummary", LatencySummary),
};

/** The `tiers` block: counts by the tier that answered. */
export const TiersStats = Type.Object({
  table: Type.Object(TierCounts),
  semantic: Type.Object({
    ...TierCounts,
    asked: count,
    novel: count,
    shed: count,
    failed: count,
  }),
  workers: count,
  queue: count,
  in_flight: count,
}, {
  description:
    "Present only when the bundle served has a second tier: answers, certified answers and decision latency (of requests with an answer of that tier) by the tier that answered; the second tier's answers asked, withheld by its novelty guard (novel), shed at a full queue, and failed; its encoder's workers, queue bound and texts in flight.",
});

/** The `tiers` block of `/v1/stats`. */
export type TiersStats = Static<typeof TiersStats>;

/** A question of the bundle as `/v1/stats` describes it. */
export const QuestionSummary = Type.Object({
  name: Type.String(),
  kind: oneOf(["choice", "yes_no"]),
  options: Type.Array(Type.String()),
  threshold: nullable(Type.Number(), {
    description:
      "The threshold in force (the calibrated one unless serving moved it): for a question served with its second tier, the two-tier rule's, for both tiers.",
  }),
  table_threshold: Type.Optional(nullable(Type.Number(), {
    description:
      "Present only for a question served with its second tier: the table's own calibrated threshold, which a server without the second tier would use (threshold, the two-tier rule's, is in force instead).",
  })),
  alpha: nullableNumber,
});

/** A question of the bundle as `/v1/stats` describes it. */
export type QuestionSummary = Static<typeof QuestionSummary>;

/** One bundle question's counts. */
export const QuestionCounts = Type.Object({
  answers: count,
  certified: count,
  share_answered: nullableNumber,
  flags: recordOf(count),
});

/** Per-question counts. */
export type QuestionCounts = Static<typeof QuestionCounts>;

/** One question's drift guard, with the wall time its alarm was first seen. */
export const DriftState = Type.Object({
  status: oneOf(["quiet", "alarmed"]),
  observed: count,
  alarmed_at: nullable(Type.Integer()),
  evidence: nonNegative,
  alarm_level: nonNegative,
  alarms: count,
  clears: count,
  since: nullable(Type.String()),
});

/** One recent decision. */
export const RecentDecision = Type.Object({
  at: Type.String({ format: "date-time" }),
  route: Type.String(),
  question: Type.String(),
  answer: Type.Union([Type.String(), Type.Boolean(), Type.Null()]),
  confidence,
  certified: Type.Boolean(),
  flag: ref("Flag", Flag),
  radius,
  text: Type.Optional(Type.String({
    description: "Only when the server runs with --keep-text.",
  })),
});

/** One recent decision as `/v1/stats` lists it. */
export type RecentDecision = Static<typeof RecentDecision>;

/** The statistics document. */
export const StatsDocument = Type.Object({
  started_at: Type.String({ format: "date-time" }),
  uptime_s: nonNegative,
  bundle: Type.Object({
    id: Type.String({
      description:
        "The bundle id: its manifest's checksum (64 hex digits), the same on every replica serving the same bundle.",
    }),
    path: Type.String(),
    load_ms: nullableNumber,
    loaded_at: Type.String({
      format: "date-time",
      description:
        "When this bundle began serving: the start, or its reload's time.",
    }),
    questions: Type.Array(QuestionSummary),
  }),
  keep_text: Type.Boolean(),
  counts: Type.Object({
    requests: count,
    answers: count,
    certified: count,
    deferred: count,
    errors: count,
    playground: count,
    feedback_refused: Type.Integer({
      minimum: 0,
      description:
        "Feedback items refused for naming an option the bundle lacks (neither logged nor counted).",
    }),
    feedback_not_labels: Type.Record(Type.String(), count, {
      description:
        "Feedback items that were no label, per reason (forged, unknown, malformed, other_question, text_mismatch): counted here and in the log's side file, never logged as a label nor counted in a certificate.",
    }),
  }),
  share_answered: nullableNumber,
  bundle_counts: Type.Object({
    answers: count,
    certified: count,
    deferred: count,
    share_answered: nullableNumber,
    deferral_reasons: recordOf(count),
  }, {
    description:
      "The answers of the bundle served now, since it began serving (bundle.loaded_at); counts and deferral_reasons run from the start of the process.",
  }),
  reloads: Type.Object({
    count: count,
    recent: Type.Array(
      Type.Object({
        at: Type.String({ format: "date-time" }),
        bundle_id: Type.String(),
        previous_bundle_id: Type.String(),
      }),
      {
        description: "The last 20 reloads, oldest first.",
      },
    ),
  }, {
    description:
      "Bundle reloads since the start (SIGHUP or --watch), each with its time and the bundle ids before and after.",
  }),
  per_question: recordOf(QuestionCounts, {
    description:
      "Per question of the bundle served now, since it began serving (a reload starts them afresh).",
  }),
  deferral_reasons: recordOf(count),
  drift_rules: recordOf(count, {
    description:
      "The answers flagged drift, per rule that withheld them: out_of_scope (the out-of-scope rule: a text asking for none of the options), novelty (the novelty guard: mostly words the table never saw), alarm (the drift guard's online alarm), live_audit (certification withdrawn by the live audits). eval names them alike.",
  }),
  latency_us: ref("LatencySummary", LatencySummary),
  latency_us_recent: ref("LatencySummary", LatencySummary),
  rate: Type.Object({ requests_per_s: nonNegative }),
  savings: Type.Object({
    llm_latency_ms: nullableNumber,
    cost_per_call: nullableNumber,
    calls_saved: count,
    time_saved_s: nullableNumber,
    money_saved: nullableNumber,
  }),
  drift: recordOf(DriftState),
  live: ref("LiveStats", LiveStats),
  tiers: Type.Optional(ref("TiersStats", TiersStats)),
  learn: Type.Optional(ref("LearnStats", LearnStats)),
  recent: Type.Array(RecentDecision),
  descriptors: Type.Object({
    open: nullable(count),
    max: nullable(count),
  }, {
    description:
      "Open file descriptors and their soft limit (Linux); null where the process may not read /proc/self, as under the locked-down permissions (Deno allows it only with --allow-all).",
  }),
  transport: Type.Object({
    accept_errors: count,
    listener_restarts: count,
    last_accept_error: Type.Union([Type.String(), Type.Null()]),
    client_body_refusals: count,
  }, {
    description:
      "Connections the listener could not accept (such as when file descriptors ran out; it listens again), and requests refused because their client address had too many bodies arriving.",
  }),
  memory: Type.Object({
    rss_bytes: count,
    heap_used_bytes: count,
    heap_total_bytes: count,
    external_bytes: count,
    word_cache_words: count,
    word_cache_bytes: count,
    word_cache_budget_bytes: count,
  }, {
    description: "The process's memory, and the word cache (bounded in bytes).",
  }),
});

/** The `/v1/stats` document. */
export type StatsDocument = Static<typeof StatsDocument>;

/** The component schemas of the statistics document. */
export const STATS_SCHEMAS = {
  LatencySummary,
  LearnStats,
  StatsDocument,
  TiersStats,
};

// The engine owns these types; the schema must describe them exactly.
const _driftState: Same<
  Omit<Static<typeof DriftState>, "since">,
  EngineDriftState
> = true;
const _kind: Same<QuestionSummary["kind"], QuestionKind> = true;
