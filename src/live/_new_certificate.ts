/**
 * The live certificate a served question starts with: the bundle's live
 * candidates, threshold, alpha and delta, and its calibration bands when it
 * has them (the feedback check; without them the threshold is never made
 * more lenient than the bundle's).
 *
 * @module
 */

import type { Calibration, QuestionTable } from "../engine/mod.ts";
import { LiveCertificate } from "../guarantee/mod.ts";

/**
 * A fresh live certificate of question `q` at audit rate `auditRate` (with
 * its calibration bands when the bundle has them), over `calibration`: the
 * question's own by default, the two-tier rule's
 * (`q.semantic.calibration`) for a tier of a question served with its
 * second tier.
 */
export function newCertificate(
  q: QuestionTable,
  auditRate: number,
  calibration: Calibration = q.calibration,
): LiveCertificate {
  return new LiveCertificate(
    calibration.candidates,
    calibration.threshold,
    { alpha: calibration.alpha, delta: calibration.delta, auditRate },
    calibration.bands ?? null,
  );
}
