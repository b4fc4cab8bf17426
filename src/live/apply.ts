/**
 * Putting a live decision in force on a served table: the threshold in
 * force, or certification withdrawn (flag `drift` with rule `live_audit`)
 * and reinstated once a threshold is supported again. Every change goes
 * through the engine's `setThresholdInForce`, `withdrawCertification` and
 * `reinstateCertification`.
 *
 * @module
 */

import type { LiveDecision } from "../engine/live.ts";
import {
  reinstateCertification,
  setThresholdInForce,
  withdrawCertification,
} from "../engine/state.ts";
import type { Table } from "../engine/table.ts";

/** Puts `decision` in force for question `name` of `table` (nothing for an uncalibrated one). */
export function applyLiveDecision(
  table: Table,
  name: string,
  decision: LiveDecision,
): void {
  if (decision.reason === "uncalibrated") return;
  if (decision.threshold === null) withdrawCertification(table, name);
  else {
    setThresholdInForce(table, name, decision.threshold);
    reinstateCertification(table, name);
  }
}
