/**
 * The parts of the `GET /v1/stats` and `POST /v1/playground` replies the
 * page reads, typed as the server sends them. Sections a server of an
 * earlier release may not send are optional.
 *
 * @module
 */

/** Percentiles of server time per decision request, in microseconds. */
export interface LatencySummary {
  count: number;
  p50: number | null;
  p90: number | null;
  p99: number | null;
  max: number | null;
}

/** A question of the bundle. */
export interface QuestionSummary {
  name: string;
  kind: string;
  options: string[];
  /** The threshold in force (with a second tier served, the two-tier rule's). */
  threshold: number | null;
  /** The table's own threshold; present only for a question served with its second tier. */
  table_threshold?: number | null;
  alpha: number | null;
}

/** One question's answers since the server started. */
export interface QuestionCounts {
  answers: number;
  certified: number;
  share_answered: number | null;
  flags?: Record<string, number>;
}

/** One question's drift guard. */
export interface DriftSummary {
  status: "quiet" | "alarmed";
  observed: number;
  alarmed_at: number | null;
  since: string | null;
  evidence: number;
  alarm_level: number;
  alarms: number;
  clears: number;
}

/** The check of a question's feedback against the bundle's calibration. */
export interface FeedbackCheck {
  status: "ok" | "suspect";
  agrees_too_much: boolean;
  disagrees_too_much: boolean;
  labelled: number;
  disagreed: number;
  expected: number;
  summary: string;
}

/** One question's live certificate. */
export interface LiveQuestion {
  reason: string;
  summary: string;
  /** Absent from servers before the feedback check; null for a bundle without calibration bands. */
  feedback_check?: FeedbackCheck | null;
}

/** The live certificate: audits of certified answers. */
export interface LiveSummary {
  enabled: boolean;
  audit_rate: number;
  pending_audits: number;
  pending_capacity: number;
  audit_ttl_s: number;
  audits_dropped: number;
  rates?: Record<string, number>;
  feedback_without_ids?: { items: number; picks_expected: number };
  /** Absent from servers before resets. */
  resets?: { total: number; last: { at: string; question: string | null }[] };
  questions: Record<string, LiveQuestion>;
}

/** One recent decision. */
export interface RecentDecision {
  at: string;
  route: string;
  question: string;
  answer: string | boolean | null;
  confidence: number;
  certified: boolean;
  flag: string | null;
  radius: number | null;
  text?: string;
}

/** The statistics document. */
export interface Stats {
  started_at: string;
  uptime_s: number;
  bundle: {
    id?: string;
    path: string;
    load_ms?: number | null;
    /** When this bundle began serving (the start, or its reload). */
    loaded_at?: string;
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
  /** Bundle reloads since the start, the last ones with their time and ids. */
  reloads?: {
    count: number;
    recent: { at: string; bundle_id: string; previous_bundle_id: string }[];
  };
  /** Per question of the bundle served now, since it began serving. */
  per_question: Record<string, QuestionCounts>;
  deferral_reasons: Record<string, number>;
  latency_us: LatencySummary;
  latency_us_recent?: LatencySummary;
  rate: { requests_per_s: number };
  savings: {
    llm_latency_ms: number | null;
    cost_per_call: number | null;
    calls_saved: number;
    time_saved_s: number | null;
    money_saved: number | null;
  };
  drift: Record<string, DriftSummary>;
  live?: LiveSummary;
  /** Present only while a bundle with a second tier is served. */
  tiers?: TiersSummary;
  learn?: LearnSummary;
  drift_rules?: Record<string, number>;
  recent: RecentDecision[];
}

/** One tier's counts. */
export interface TierSummary {
  answers: number;
  certified: number;
  share_answered: number | null;
  latency_us: LatencySummary;
}

/** Counts by the tier that answered. */
export interface TiersSummary {
  table: TierSummary;
  semantic: TierSummary & {
    asked: number;
    novel: number;
    shed: number;
    failed: number;
  };
  workers: number;
  queue: number;
  in_flight: number;
}

/** The playground's answer for one text. */
export interface PlaygroundReply {
  question: string;
  answer: string | boolean | null;
  confidence: number;
  threshold: number | null;
  alpha: number | null;
  certified: boolean;
  flag: string | null;
  reason: string;
  radius: number | null;
  top: { option: string; probability: number }[];
}

/** A learning service's learner (`serve --learn`). */
export interface LearnSummary {
  dir: string;
  labels: number;
  next_retrain_at: number;
  labels_per_s?: number;
  next_retrain_in_s?: number | null;
  advice?: Record<string, {
    more_labels: { low: number; high: number | null };
    minutes: { low: number; high: number | null } | null;
    labels_per_s: number;
    moved: boolean;
  }>;
  running: boolean;
  retrains: number;
  swaps: number;
  held: string[];
  unlearned: string[];
  history: {
    started: string;
    ended: string;
    labels: number;
    seconds: number;
    swapped: boolean;
    reason: string;
  }[];
  series: {
    from: string;
    to: string;
    decisions: number;
    certified: number;
    calls: number;
  }[];
  /** A learning fleet (`--learn` with `--live-store`): true on the replica that learns. */
  learner?: boolean;
  fleet?: {
    replica: string;
    learner: string | null;
    lease: number | null;
    learner_status_age_s: number;
    outbox: { waiting: number; shipped: number };
    bundle: { id: string; version: number; replica: string } | null;
    replicas: Record<
      string,
      {
        labels: number;
        decisions: number;
        picked: number;
        picks_answered: number;
      }
    >;
  };
}
