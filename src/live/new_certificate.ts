/**
 * The live certificate a served question starts with: the bundle's live
 * candidates, threshold, alpha and delta, and its calibration bands when it
 * has them (the feedback check; without them the threshold is never made
 * more lenient than the bundle's).
 *
 * @module
 */

import { LiveCertificate } from "../engine/live.ts";
import type { QuestionTable } from "../engine/table.ts";

/** A fresh live certificate of question `q` at audit rate `auditRate` (with its calibration bands when the bundle has them). */
export function newCertificate(
  q: QuestionTable,
  auditRate: number,
): LiveCertificate {
  return new LiveCertificate(
    q.calibration.candidates,
    q.calibration.threshold,
    { alpha: q.calibration.alpha, delta: q.calibration.delta, auditRate },
    q.calibration.bands ?? null,
  );
}
