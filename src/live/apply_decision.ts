/**
 * Putting a live decision in force on a served table: the threshold in
 * force, or certification withdrawn (flag `drift` with rule `live_audit`)
 * and reinstated once a threshold is supported again. Every change goes
 * through the engine's `setThresholdInForce`, `withdrawCertification` and
 * `reinstateCertification`.
 *
 * @module
 */

import {
  reinstateCertification,
  setThresholdInForce,
  type Table,
  type TableState,
  withdrawCertification,
} from "../engine/mod.ts";
import type { LiveDecision } from "../guarantee/mod.ts";

/**
 * Puts `decision` in force for question `name` of `table` in its serving
 * `state` (nothing for an uncalibrated one).
 */
export function applyLiveDecision(
  table: Table,
  state: TableState,
  name: string,
  decision: LiveDecision,
): void {
  if (decision.reason === "uncalibrated") return;
  if (decision.threshold === null) withdrawCertification(table, state, name);
  else {
    setThresholdInForce(table, state, name, decision.threshold);
    reinstateCertification(table, state, name);
  }
}
