/**
 * What the fleet's pooled log says per replica, read line by line as it
 * arrives: the labels each replica took, and the decisions, calibration
 * picks and answered picks each replica issued (a label answers the
 * decision of the replica that made it, named by its issuer, which the
 * ledger lines tie to the replica), so the learner's report shows that the
 * picks of every replica calibrate. The ledger lines also make the fleet's
 * traffic per stretch (`StretchPoint`), summed over replicas.
 *
 * @module
 */

import type { StretchPoint } from "../learner.ts";

/** Stretch points kept for a learner that takes over. */
const SERIES_KEPT = 500;
/** A stretch is complete once the pool reached this many ms past its end. */
const STRETCH_SETTLE_MS = 15_000;

/** One replica's share of the pooled log. */
export interface ReplicaShare {
  /** Labels (feedback lines) this replica took. */
  labels: number;
  /** Decisions it made, those the calibration coin picked, and the picked ones some replica took a label for. */
  decisions: number;
  picked: number;
  picks_answered: number;
}

/** A pooled label: its answers, and whether it carried an id the service signed for its text. */
export interface PooledLabel {
  answers: [string, string | boolean][];
  backed: boolean;
}

const PICK_SOURCES = new Set(["sample", "audit"]);

/** Counts of the pooled log per replica (see the module doc). */
export class ReplicaCounts {
  readonly #shares = new Map<string, ReplicaShare>();
  readonly #issuers = new Map<string, string>();
  /** Answered picks of issuers not yet tied to a replica. */
  readonly #orphans = new Map<string, number>();
  readonly #open = new Map<number, StretchPoint>();
  #newest = -Infinity;
  readonly #done: StretchPoint[] = [];
  readonly #series: StretchPoint[] = [];

  #share(replica: string): ReplicaShare {
    let s = this.#shares.get(replica);
    if (s === undefined) {
      this.#shares.set(
        replica,
        s = { labels: 0, decisions: 0, picked: 0, picks_answered: 0 },
      );
    }
    return s;
  }

  /** Counts one pooled line written by `replica`; returns its label when it is one. */
  line(replica: string, line: string): PooledLabel | null {
    if (line.startsWith('{"ledger"')) {
      this.#ledger(replica, line);
      return null;
    }
    if (!line.startsWith('{"text"')) return null;
    let parsed: {
      answers?: Record<string, unknown>;
      feedback?: {
        source?: string;
        id?: string;
        audit?: string;
        issuer?: string;
      };
    };
    try {
      parsed = JSON.parse(line);
    } catch {
      return null;
    }
    const answers: [string, string | boolean][] = [];
    for (const [q, a] of Object.entries(parsed.answers ?? {})) {
      if (typeof a === "string" || typeof a === "boolean") answers.push([q, a]);
    }
    if (answers.length === 0) return null;
    this.#share(replica).labels++;
    const f = parsed.feedback;
    if (f?.source !== undefined && PICK_SOURCES.has(f.source) && f.issuer) {
      const issuing = this.#issuers.get(f.issuer);
      if (issuing !== undefined) this.#share(issuing).picks_answered++;
      else this.#orphans.set(f.issuer, (this.#orphans.get(f.issuer) ?? 0) + 1);
    }
    return {
      answers,
      backed: f?.id !== undefined || f?.audit !== undefined,
    };
  }

  #ledger(replica: string, line: string): void {
    let l: {
      issuer?: string;
      from?: string;
      to?: string;
      decisions?: number;
      certified?: number;
      picked?: number;
      picked_certified?: number;
    } | undefined;
    try {
      l = (JSON.parse(line) as { ledger?: typeof l }).ledger;
    } catch {
      return;
    }
    if (l === undefined) return;
    const share = this.#share(replica);
    if (typeof l.issuer === "string" && !this.#issuers.has(l.issuer)) {
      this.#issuers.set(l.issuer, replica);
      share.picks_answered += this.#orphans.get(l.issuer) ?? 0;
      this.#orphans.delete(l.issuer);
    }
    const decisions = Number(l.decisions ?? 0);
    const certified = Number(l.certified ?? 0);
    share.decisions += decisions;
    share.picked += Number(l.picked ?? 0);
    const from = Date.parse(l.from ?? "");
    const to = Date.parse(l.to ?? "");
    if (!Number.isFinite(from) || !Number.isFinite(to)) return;
    let p = this.#open.get(from);
    if (p === undefined) {
      p = { from, to, decisions: 0, certified: 0, calls: 0 };
      this.#open.set(from, p);
    }
    p.to = Math.max(p.to, to);
    p.decisions += decisions;
    p.certified += certified;
    p.calls += decisions - certified + Number(l.picked_certified ?? 0);
    this.#newest = Math.max(this.#newest, to);
    for (const [f, q] of this.#open) {
      if (q.to + STRETCH_SETTLE_MS > this.#newest) continue;
      this.#open.delete(f);
      this.#done.push(q);
      this.#series.push(q);
      if (this.#series.length > SERIES_KEPT) this.#series.shift();
    }
  }

  /** The stretches completed since the last call, oldest first. */
  takeStretches(): StretchPoint[] {
    this.#done.sort((a, b) => a.from - b.from);
    return this.#done.splice(0);
  }

  /** The last completed stretches (for a learner that takes over). */
  series(): readonly StretchPoint[] {
    return this.#series;
  }

  /** Per replica, its share of the pooled log. */
  perReplica(): Record<string, ReplicaShare> {
    return Object.fromEntries(
      [...this.#shares].sort(([a], [b]) => a < b ? -1 : 1).map((
        [r, s],
      ) => [r, { ...s }]),
    );
  }
}
