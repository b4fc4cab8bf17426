/**
 * The last stage of training: a trained table, its rows and report as the
 * bundle files' contents.
 *
 * @module
 */

import type { Table } from "../engine/mod.ts";
import type { BundleContents } from "../bundle/mod.ts";
import { TOOL_VERSION } from "../version.ts";
import type { TrainReport } from "./report.ts";

/** A trained table, its row buckets and its report. */
export interface TrainResult {
  table: Table;
  rowBuckets: Int32Array;
  report: TrainReport;
  /**
   * Per trace, the part it went to (`FIT`, `VALIDATION`, `CALIBRATION` or
   * `TEST` of `split.ts`): to measure another table on the same held-out
   * traces. Not written to the bundle.
   */
  parts?: Uint8Array;
}

/** The bundle files' contents for a training result. */
export function trainedContents(r: TrainResult): BundleContents {
  return {
    featurizer: r.table.featurizer,
    settings: r.table.settings,
    toolVersion: TOOL_VERSION,
    rowBuckets: r.rowBuckets,
    questions: r.table.questions,
    training: r.report.training,
    models: r.report.questions.map((q) => ({
      l2: q.model.l2,
      epochs: q.model.epochs,
    })),
    report: r.report,
  };
}
