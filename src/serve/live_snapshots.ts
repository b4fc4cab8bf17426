/**
 * Snapshots of the live certificate's evidence written into the feedback
 * log beside the decision ledger (`src/live/snapshot.ts`): at most one a
 * minute while the evidence changes, and one when the process stops, so a
 * restart on the same log resumes the audits, the threshold in force and
 * any standing feedback alarm.
 *
 * @module
 */

import type { Table } from "../engine/mod.ts";
import {
  type CertificateSource,
  snapshotLine,
  takeSnapshot,
} from "../live/mod.ts";
import type { DrainsLines } from "./ledger_flush.ts";

/** Least time between two snapshots while the evidence changes: a minute. */
export const SNAPSHOT_EVERY_MS = 60_000;

/**
 * Lines to write beside `ledger`'s: the ledger's own, and a snapshot of the
 * served table's live evidence (`served()`) when a minute has passed and
 * it changed, or at the last drain (`all`).
 */
export function withLiveSnapshots(
  ledger: DrainsLines,
  source: CertificateSource,
  served: () => Table,
  everyMs = SNAPSHOT_EVERY_MS,
): DrainsLines {
  let last = -Infinity;
  let written = "";
  return {
    drain(now: number, all?: boolean): string {
      const lines = ledger.drain(now, all);
      if (!all && now - last < everyMs) return lines;
      last = now;
      const snapshot = takeSnapshot(source, served(), now);
      const counts = JSON.stringify(snapshot.questions);
      if (counts === written) return lines;
      written = counts;
      return lines + snapshotLine(snapshot);
    },
  };
}
