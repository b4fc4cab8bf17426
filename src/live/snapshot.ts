/**
 * The live certificate's evidence kept across a restart. A serving process
 * with a feedback log writes, now and then and when it stops, one line
 * `{"live": {"bundle", "at", "questions": [...]}}` holding each question's
 * live evidence and policy (the counts its tests by betting stand on, the
 * candidate in force, the refuted ones, the feedback alarms) for the
 * bundle it serves; a process that starts on the same log and bundle puts
 * the last such line back, so its audits, its threshold and a standing
 * alarm are what they were before the stop. A test by betting paused and
 * resumed on the same counts is the same test: nothing of its validity is
 * lost. A fleet keeps its evidence in its store instead.
 *
 * @module
 */

import type { Table } from "../engine/mod.ts";
import type {
  LiveCertificate,
  LiveEvidence,
  LivePolicy,
} from "../guarantee/mod.ts";
import { bundleIdOf } from "./bundle_id.ts";

/** One certificate's evidence and policy. */
export interface CertificateSnapshot {
  evidence: LiveEvidence;
  policy: LivePolicy;
}

/** The live evidence of one served bundle (see the module doc). */
export interface LiveSnapshot {
  /** The first 16 hex digits of the bundle's id. */
  bundle: string;
  /** When it was taken, ms since the epoch. */
  at: number;
  questions: {
    name: string;
    table: CertificateSnapshot;
    /** The second tier's certificate, for a question served with one. */
    tier?: CertificateSnapshot;
  }[];
}

/** What a live snapshot reads and writes: a served table's certificates (a `LiveController`). */
export interface CertificateSource {
  certificates(table: Table): readonly LiveCertificate[];
  semanticCertificates(table: Table): readonly (LiveCertificate | null)[];
  /** Puts question `name`'s decision in force after its evidence changed. */
  apply(table: Table, name: string): void;
}

/** The first 16 hex digits of `table`'s bundle id, as the log's lines carry it. */
function bundleOf(table: Table): string {
  return bundleIdOf(table).slice(0, 16);
}

/** The live evidence of `table` now (see `LiveSnapshot`). */
export function takeSnapshot(
  source: CertificateSource,
  table: Table,
  at: number,
): LiveSnapshot {
  const certificates = source.certificates(table);
  const tiers = source.semanticCertificates(table);
  return {
    bundle: bundleOf(table),
    at,
    questions: table.questions.map((q, slot) => {
      const c = certificates[slot]!;
      const tier = tiers[slot] ?? null;
      return {
        name: q.name,
        table: { evidence: c.evidence(), policy: c.policy() },
        ...(tier === null
          ? {}
          : { tier: { evidence: tier.evidence(), policy: tier.policy() } }),
      };
    }),
  };
}

/**
 * Puts `snapshot` back into `table`'s certificates when it was taken of
 * the same bundle: each question's evidence and policy, then its decision
 * in force. A question the snapshot lacks, or whose counts do not fit its
 * certificate, starts afresh. Returns the questions restored.
 */
export function restoreSnapshot(
  source: CertificateSource,
  table: Table,
  snapshot: LiveSnapshot,
): string[] {
  if (snapshot.bundle !== bundleOf(table)) return [];
  const certificates = source.certificates(table);
  const tiers = source.semanticCertificates(table);
  const restored: string[] = [];
  table.questions.forEach((q, slot) => {
    const s = snapshot.questions.find((x) => x.name === q.name);
    if (s === undefined) return;
    try {
      certificates[slot]!.restore(s.table.evidence, s.table.policy);
      const tier = tiers[slot] ?? null;
      if (tier !== null && s.tier !== undefined) {
        tier.restore(s.tier.evidence, s.tier.policy);
      }
    } catch (e) {
      if (e instanceof RangeError) return;
      throw e;
    }
    source.apply(table, q.name);
    restored.push(q.name);
  });
  return restored;
}

/** `snapshot` as one line of a feedback log, newline-terminated. */
export function snapshotLine(snapshot: LiveSnapshot): string {
  return JSON.stringify({ live: snapshot }) + "\n";
}

/**
 * The last snapshot line of `bundle` (16 hex digits) in `text` (a feedback
 * log's lines), or null when there is none; lines that do not parse are
 * passed over.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { lastSnapshot } from "./snapshot.ts";
 * const line = (at: number) => JSON.stringify({ live: { bundle: "ab", at, questions: [] } });
 * assert.equal(lastSnapshot([line(1), '{"text":"x"}', line(2)].join("\n"), "ab")?.at, 2);
 * assert.equal(lastSnapshot(line(1), "cd"), null);
 * ```
 */
export function lastSnapshot(
  text: string,
  bundle: string,
): LiveSnapshot | null {
  const lines = text.split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (!line.startsWith('{"live"')) continue;
    try {
      const s = (JSON.parse(line) as { live: LiveSnapshot }).live;
      if (
        s?.bundle === bundle && Array.isArray(s.questions) &&
        typeof s.at === "number"
      ) return s;
    } catch { /* a torn line */ }
  }
  return null;
}

/** Bytes read back from a log's end to find its last snapshot (it is written at least every minute). */
export const SNAPSHOT_TAIL_BYTES = 16 * 1024 * 1024;

/**
 * The last snapshot of `table`'s bundle in the log at `path`, from its
 * last `SNAPSHOT_TAIL_BYTES`; null when there is none or the log cannot be
 * read.
 */
export async function readSnapshot(
  path: string,
  table: Table,
): Promise<LiveSnapshot | null> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch {
    return null;
  }
  try {
    const size = (await file.stat()).size;
    const start = Math.max(0, size - SNAPSHOT_TAIL_BYTES);
    await file.seek(start, Deno.SeekMode.Start);
    const buffer = new Uint8Array(size - start);
    let read = 0;
    while (read < buffer.length) {
      const n = await file.read(buffer.subarray(read));
      if (n === null) break;
      read += n;
    }
    return lastSnapshot(
      new TextDecoder().decode(buffer.subarray(0, read)),
      bundleOf(table),
    );
  } catch {
    return null;
  } finally {
    file.close();
  }
}
