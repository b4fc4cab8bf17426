/**
 * What a live certificate keeps and reports, apart from how it tests: its
 * settings, its evidence as plain counts that add up (the evidence of
 * several replicas is the sum of theirs: `addEvidence`), where its policy
 * stands, its state as reported, and the grid of live candidate
 * thresholds. The tests by betting over this evidence and the policy they
 * drive are `live_certificate.ts`. Pure.
 *
 * @module
 */

import type { FeedbackCheckState } from "./feedback_check.ts";

/** Settings of a live certificate. */
export interface LiveSettings {
  /** Target disagreement rate among certified answers. */
  alpha: number;
  /** Probability that the live tests ever err (certify a bad threshold, or refute a good one). */
  delta: number;
  /** Probability that a certified answer is picked for audit, in (0, 1]. */
  auditRate: number;
}

/** Why the threshold in force is what it is. */
export type LiveReason =
  | "bundle" /** the bundle's threshold; live audits have not refuted it */
  | "live_lower" /** more lenient than the bundle's, certified by live audits */
  | "live_stricter" /** stricter than the bundle's, after live audits refuted a more lenient one */
  | "withdrawn" /** live audits refuted every candidate */
  | "uncalibrated"; /** the bundle has no threshold for the question */

/** The threshold in force and why (cheap to ask after every batch of feedback). */
export interface LiveDecision {
  /** The threshold in force; null when withdrawn or uncalibrated. */
  threshold: number | null;
  reason: LiveReason;
}

/** What the live evidence says about one candidate threshold. */
export interface CandidateState {
  threshold: number;
  /** Decisions seen at or above this threshold (certified or with feedback). */
  decisions: number;
  /** Labelled decisions (audits and feedback) at or above it. */
  labelled: number;
  /** Weighted disagreement rate estimate; null before any decision. */
  estimate: number | null;
  /** Anytime-valid interval of the rate (confidence 1 - delta, per candidate); null bounds when unknown. */
  lower: number | null;
  upper: number | null;
  certified: boolean;
  refuted: boolean;
}

/** The live certificate of a question, as reported. */
export interface LiveState {
  /** The threshold in force; null when certification is withdrawn. */
  threshold: number | null;
  reason: LiveReason;
  /** The bundle's own threshold (null when uncalibrated). */
  bundleThreshold: number | null;
  /** Audits answered, and how many disagreed. */
  audited: number;
  auditDisagreements: number;
  /** Feedback on uncertified answers, and uncertified decisions (its coverage). */
  feedback: number;
  uncertifiedDecisions: number;
  /** The candidate in force (or the bundle's when withdrawn). */
  inForce: CandidateState | null;
  /** Every candidate, strictest first. */
  candidates: CandidateState[];
  /** The check of the feedback against the bundle's calibration bands; null for a bundle without bands. */
  feedbackCheck: FeedbackCheckState | null;
}

/**
 * A certificate's evidence as plain counts, which add up: the evidence of
 * several streams of decisions about the same question is the sum of
 * theirs (a fleet of replicas pools it in a shared store). Observations are
 * counted by the strictest candidate they reach (a candidate's own counts
 * are the sums over the candidates up to and including it), by kind.
 */
export interface LiveEvidence {
  /** Per candidate, strictest first: decisions with no disagreement observed (certified and not audited, or labelled and agreed). */
  agreed: number[];
  /** Per candidate: audits where the model disagreed. */
  auditDisagreed: number[];
  /** Per candidate: feedback on uncertified answers where the model disagreed. */
  feedbackDisagreed: number[];
  /** Per candidate: labelled answers (audits and feedback). */
  labelled: number[];
  /**
   * Per candidate: audits among the labelled answers (the feedback
   * check's liar test weighs them apart from the reported answers).
   * Evidence pooled before it was counted has none: its labels all count
   * as reported.
   */
  auditLabelled: number[];
  /** Audits answered, and how many disagreed. */
  audited: number;
  auditDisagreements: number;
  /** Feedback counted on uncertified answers, and uncertified decisions. */
  feedback: number;
  uncertified: number;
}

/**
 * Where a certificate's policy stands: the strictest refuted candidate
 * (`floor`, the number of candidates while none is) and the candidate in
 * force (`inForce`, -1 when withdrawn or uncalibrated), as indexes into its
 * thresholds, strictest first.
 */
export interface LivePolicy {
  floor: number;
  inForce: number;
  /** Latched feedback alarms (`AGREES_TOO_MUCH | DISAGREES_TOO_MUCH` bits); 0 when absent. */
  alarms?: number;
}

/** Evidence of nothing, over `k` candidates. */
export function emptyEvidence(k: number): LiveEvidence {
  const zeros = () => new Array<number>(k).fill(0);
  return {
    agreed: zeros(),
    auditDisagreed: zeros(),
    feedbackDisagreed: zeros(),
    labelled: zeros(),
    auditLabelled: zeros(),
    audited: 0,
    auditDisagreements: 0,
    feedback: 0,
    uncertified: 0,
  };
}

/** The evidence of two streams together; throws `RangeError` when they count different numbers of candidates. */
export function addEvidence(a: LiveEvidence, b: LiveEvidence): LiveEvidence {
  if (a.agreed.length !== b.agreed.length) {
    throw new RangeError(
      `Cannot add evidence over ${a.agreed.length} and ${b.agreed.length} candidates`,
    );
  }
  const sum = (x: number[], y: number[]) => x.map((v, i) => v + y[i]!);
  return {
    agreed: sum(a.agreed, b.agreed),
    auditDisagreed: sum(a.auditDisagreed, b.auditDisagreed),
    feedbackDisagreed: sum(a.feedbackDisagreed, b.feedbackDisagreed),
    labelled: sum(a.labelled, b.labelled),
    auditLabelled: sum(a.auditLabelled, b.auditLabelled),
    audited: a.audited + b.audited,
    auditDisagreements: a.auditDisagreements + b.auditDisagreements,
    feedback: a.feedback + b.feedback,
    uncertified: a.uncertified + b.uncertified,
  };
}

/** At most this many candidates (the bundle's threshold among them). */
export const LIVE_CANDIDATES = 16;

/**
 * The live grid: up to `LIVE_CANDIDATES` thresholds from the bundle's
 * candidate grid (strictest first), evenly spread, always holding the
 * bundle's threshold.
 */
export function liveGrid(
  grid: readonly number[],
  threshold: number | null,
  size = LIVE_CANDIDATES,
): number[] {
  const sorted = [...new Set(grid)].sort((a, b) => b - a);
  const picked = new Set<number>();
  if (threshold !== null) picked.add(threshold);
  const room = size - picked.size;
  for (let i = 0; i < room && sorted.length > 0; i++) {
    const at = Math.round((i * (sorted.length - 1)) / Math.max(1, room - 1));
    picked.add(sorted[at]!);
  }
  return [...picked].sort((a, b) => b - a);
}
