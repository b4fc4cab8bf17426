/**
 * The `/v1/stats` document: its type and the pieces it is assembled from.
 *
 * @module
 */

import type { DriftState } from "../../engine/drift.ts";
import type { QuestionKind } from "../../engine/table.ts";
import { setKey } from "../fields.ts";
import type { LatencySummary } from "./latency.ts";
import type { RecentDecision } from "./recent.ts";

/** A question of the bundle as `/v1/stats` describes it. */
export interface QuestionSummary {
  name: string;
  kind: QuestionKind;
  options: string[];
  /** The threshold in force (the calibrated one unless serving moved it). */
  threshold: number | null;
  alpha: number | null;
}

/** Per-question counts. */
export interface QuestionCounts {
  answers: number;
  certified: number;
  share_answered: number | null;
  flags: Record<string, number>;
}

/** The `/v1/stats` document. */
export interface StatsDocument {
  started_at: string;
  uptime_s: number;
  bundle: {
    path: string;
    load_ms: number | null;
    questions: QuestionSummary[];
  };
  keep_text: boolean;
  counts: {
    requests: number;
    answers: number;
    certified: number;
    deferred: number;
    errors: number;
    playground: number;
  };
  share_answered: number | null;
  per_question: Record<string, QuestionCounts>;
  deferral_reasons: Record<string, number>;
  latency_us: LatencySummary;
  /** The same over the last 10 to 20 seconds (the running window and the one before). */
  latency_us_recent: LatencySummary;
  rate: { requests_per_s: number };
  savings: {
    llm_latency_ms: number | null;
    cost_per_call: number | null;
    calls_saved: number;
    time_saved_s: number | null;
    money_saved: number | null;
  };
  drift: Record<string, DriftState & { since: string | null }>;
  recent: RecentDecision[];
  /** The process's memory, and the word cache (bounded in bytes). */
  memory: {
    rss_bytes: number;
    heap_used_bytes: number;
    heap_total_bytes: number;
    external_bytes: number;
    word_cache_words: number;
    word_cache_bytes: number;
    word_cache_budget_bytes: number;
  };
}

/** `part / whole`, or null when `whole` is 0 (an undefined share is not 0). */
export function share(part: number, whole: number): number | null {
  return whole === 0 ? null : part / whole;
}

/** An object from entries, any key (`__proto__` included) an own property. */
export function record<T>(entries: Iterable<[string, T]>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [k, v] of entries) setKey(out, k, v);
  return out;
}
