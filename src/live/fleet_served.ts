/**
 * What a fleet replica keeps of the table it serves (`fleet.ts`): the
 * streams pooled (each question's table, then the second tiers), the
 * store's names for them, the certificates it counts in and weighs the
 * pooled evidence with, the records last read and the policy in force
 * here; and how the policy in force is put in force in the serving state.
 *
 * @module
 */

import type { Table, TableState } from "../engine/mod.ts";
import {
  emptyEvidence,
  type LiveCertificate,
  type LiveEvidence,
  type LivePolicy,
} from "../guarantee/mod.ts";
import { applyLiveDecision } from "./apply_decision.ts";
import { type FleetTrack, fleetTracks, poolName } from "./fleet_tracks.ts";

/** A question's record as last read from the store. */
export interface Pooled {
  evidence: LiveEvidence;
  policy: LivePolicy | null;
  version: number;
}

/** The table served now and its fleet state. */
export interface Served {
  readonly table: Table;
  /** The serving state decisions are put in force in. */
  readonly state: TableState;
  /** The store's name of the evidence (`poolName`). */
  readonly bundle: string;
  /** Per track: its record's name in the store. */
  readonly names: readonly string[];
  /** The streams pooled: the table's of every question first (track = slot), then the second tier's. */
  readonly tracks: readonly FleetTrack[];
  /** Per question: the track of its second tier, -1 without one. */
  readonly semanticTrack: readonly number[];
  /** Per question: the second tier's threshold in force here (see `semanticThreshold`). */
  semanticThresholds: (number | null)[];
  /** The controller's certificates, used here as counters of what this replica saw since its last batch. */
  readonly counters: readonly LiveCertificate[];
  /** Per question: the pooled certificate the policy is weighed on. */
  readonly views: readonly LiveCertificate[];
  /** Per question: the same, for statistics. */
  readonly display: readonly LiveCertificate[];
  /** Per question: the policy a fresh certificate starts with. */
  readonly initial: readonly LivePolicy[];
  /** Per question: where audits are turned into evidence. */
  readonly scratch: readonly LiveCertificate[];
  pooled: (Pooled | null)[];
  /** Per question: the policy in force on this replica. */
  applied: LivePolicy[];
  /** Per question: the reset generation counted in (-1 before the store is read). */
  generations: number[];
}

/**
 * The fleet state of `table` served in `state`, counting in `counters` at
 * `auditRate` (and the second tiers' in `semantic`, see `FleetLive.serve`):
 * certification withheld (nothing applied) until the store is read.
 */
export function servedOf(
  table: Table,
  state: TableState,
  counters: readonly LiveCertificate[],
  auditRate: number,
  semantic?: readonly (LiveCertificate | null)[],
): Served {
  const { tracks, names, semanticTrack, counters: allCounters, fresh } =
    fleetTracks(table, counters, auditRate, semantic);
  const make = () => tracks.map((_, i) => fresh(i));
  const views = make();
  const initial = views.map((v) => v.policy());
  return {
    table,
    state,
    bundle: poolName(table, semanticTrack.some((t) => t >= 0)),
    names,
    tracks,
    semanticTrack,
    semanticThresholds: table.questions.map(() => null),
    counters: allCounters,
    views,
    display: make(),
    initial,
    scratch: make(),
    pooled: views.map(() => null),
    applied: initial.map((p) => ({ floor: p.floor, inForce: -1 })),
    generations: views.map(() => -1),
  };
}

/** Puts the policy in force of every stream of `s` in force: the table's in its serving state, the second tiers' as thresholds. */
export function applyAll(s: Served): void {
  s.tracks.forEach((t, i) => {
    const view = s.display[i]!;
    view.restore(emptyEvidence(view.thresholds.length), s.applied[i]);
    const d = view.current();
    if (t.tier === "table") {
      applyLiveDecision(s.table, s.state, t.question, d);
    } else if (d.reason !== "uncalibrated") {
      s.semanticThresholds[t.slot] = d.threshold;
    }
  });
}
