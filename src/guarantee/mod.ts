/**
 * The guarantee: the arithmetic behind "certified", in one room. Pure: no
 * I/O, no clock, no module-level state; it knows numbers and counts, not
 * tables, traces or HTTP (the engine, training and the live loop call it).
 *
 * - Certification at training (`certify.ts`): Learn-then-Test's fixed
 *   sequence with fallback over candidate thresholds, planned before a
 *   calibration label is read.
 * - The live certificate (`live_certificate.ts`): tests by betting over the
 *   audited and reported answers while serving, and the threshold policy
 *   they drive; what it keeps and reports, its evidence as counts that add
 *   up across replicas (`live_evidence.ts`).
 * - The feedback check (`feedback_check.ts`): the calibration bands and
 *   the two alarms that say the feedback is not what calibration saw.
 * - One promise over a learner's many tests (`spending.ts`): the share of
 *   delta each test of a question is run at, so that the shares of all its
 *   tests add up to delta.
 * - The distributions they share (`distributions.ts`): binomial and
 *   beta-binomial tails and the one Clopper-Pearson bound.
 *
 * docs/guarantee.md states each promise and the assumption it rests on.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fixedSequence, minimumCertifiable } from "./mod.ts";
 *
 * // 59 certified answers without a disagreement pass at alpha = delta = 0.05.
 * assert.equal(minimumCertifiable(0.05, 0.05), 59);
 * const choice = fixedSequence(
 *   { grid: [0.9], levels: [0.05] },
 *   [{ n: 59, k: 0, effective: 59 }],
 *   0.05,
 *   59,
 * );
 * assert.equal(choice.threshold, 0.9);
 * ```
 *
 * @module
 */

export {
  candidateGrid,
  type CertificationPlan,
  fallbackTest,
  fixedSequence,
  type GridCount,
  gridCounts,
  notTested,
  openCount,
  planCertification,
  START_SHARE,
  type TestGate,
  type ThresholdChoice,
  worthTesting,
} from "./certify.ts";
export {
  binomialTail,
  clopperPearson,
  clopperPearsonBounds,
  largestPassing,
  minimumCertifiable,
} from "./distributions.ts";
export {
  AGREES_TOO_MUCH,
  type CalibrationBand,
  calibrationBands,
  type DisagreeRegion,
  DISAGREES_TOO_MUCH,
  FEEDBACK_ALARM_RATE,
  type FeedbackCheckState,
} from "./feedback_check.ts";
export { LiveCertificate } from "./live_certificate.ts";
export { spentLevel, testLevel } from "./spending.ts";
export {
  addEvidence,
  emptyEvidence,
  type LiveDecision,
  type LiveEvidence,
  liveGrid,
  type LivePolicy,
  type LiveReason,
  type LiveSettings,
  type LiveState,
} from "./live_evidence.ts";
