/**
 * What a table knows about its bundle (`Table.info`), typed: the manifest's
 * format, versions and id, how the table was trained (the manifest's
 * `training` record) and the training report (`report.json`). The trainer
 * writes them and the bundle's codec reads them back as plain records (the
 * bundle format does not know training's types); `inspect`, `versions`,
 * `eval` and the HTML report read them from here, typed.
 *
 * @module
 */

import type { Table } from "../engine/mod.ts";
import type { TrainingSettings } from "./options.ts";
import type { QuestionReport, TrainReport } from "./report.ts";

/**
 * One question's part of a stored report. Reports written by older
 * versions may lack any figure, so only the name is sure.
 */
export type StoredQuestionReport = Partial<QuestionReport> & { name: string };

/**
 * A training report as read back from a bundle: a `TrainReport` written by
 * this version, any part of which an older one may lack.
 */
export type StoredReport =
  & Partial<Omit<TrainReport, "questions" | "training">>
  & {
    training?: Partial<TrainingSettings>;
    questions?: StoredQuestionReport[];
  };

/** What a table knows about its bundle; a table fresh from training has only `report`. */
export interface BundleInfo {
  /** The manifest's format name and version, and the tool that wrote it. */
  format?: string;
  format_version?: number;
  tool_version?: string;
  /** The manifest's SHA-256 (null for a manifest without one). */
  bundle_id?: string | null;
  /** Format 3 on: how the table was trained (null before). */
  training?: Partial<TrainingSettings> | null;
  /** The training report; null when `report.json` held none. */
  report?: StoredReport | null;
}

/**
 * `table.info` typed: the codec and the trainer are its only writers, and
 * both write a `BundleInfo` (the codec checks `report.json`'s shape before
 * it keeps it: `reportRecord` in `src/bundle/codec.ts`).
 */
export function bundleInfo(table: Table): BundleInfo {
  return table.info as BundleInfo;
}

/** The stored report's entry for question `name`, if any. */
export function questionReportOf(
  info: BundleInfo,
  name: string,
): StoredQuestionReport | undefined {
  return info.report?.questions?.find((q) => q.name === name);
}
