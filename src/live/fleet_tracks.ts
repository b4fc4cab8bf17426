/**
 * The streams of evidence a fleet pools for a served table (`fleet.ts`):
 * per question, its table answers, and with the table served with its
 * second tier, its second tier's answers too, each a record of its own in
 * the store under a name every replica of the bundle picks alike.
 *
 * @module
 */

import type { Table } from "../engine/mod.ts";
import type { LiveCertificate } from "../guarantee/mod.ts";
import { bundleIdOf } from "./bundle_id.ts";
import { newCertificate } from "./_new_certificate.ts";

/**
 * One stream of evidence the store pools: a question's table answers, or
 * its second tier's (`tier` "semantic"), each its own record in the store.
 */
export interface FleetTrack {
  /** The question's position in the table. */
  readonly slot: number;
  readonly tier: "table" | "semantic";
  /** The question's name. */
  readonly question: string;
}

/** The streams of a served table (see `fleetTracks`). */
export interface FleetTracks {
  /** The table's stream of every question first (track = slot), then the second tiers'. */
  readonly tracks: readonly FleetTrack[];
  /** Per track: its record's name in the store. */
  readonly names: readonly string[];
  /** Per question: the track of its second tier, -1 without one. */
  readonly semanticTrack: readonly number[];
  /** Per track: the controller's certificate that counts it. */
  readonly counters: readonly LiveCertificate[];
  /** A fresh certificate of track `i`. */
  fresh(i: number): LiveCertificate;
}

/**
 * The store's name of the second tier's record of `question`: the name
 * with `#semantic` after it (with `#` put before it until no question of
 * the table, `taken`, is named so: every replica of a bundle picks the
 * same).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { semanticRecordName } from "./fleet_tracks.ts";
 * assert.equal(semanticRecordName("topic", new Set(["topic"])), "topic#semantic");
 * ```
 */
export function semanticRecordName(
  question: string,
  taken: ReadonlySet<string>,
): string {
  let name = `${question}#semantic`;
  while (taken.has(name)) name = `#${name}`;
  return name;
}

/**
 * The store's name of the evidence of `table` served with its second tier
 * (`tiered`) or without: the bundle id, with `+semantic` after it when
 * tiered. The two are pools of their own (a question's table answers are
 * certified against another rule in each), so an audit id given in one is
 * `not_shared` in the other.
 */
export function poolName(table: Table, tiered: boolean): string {
  return tiered ? `${bundleIdOf(table)}+semantic` : bundleIdOf(table);
}

/**
 * The streams of `table` counted in `counters` (the controller's table
 * certificates, one per question) and, when the table is served with its
 * second tier, `semantic` (its second tier's, null for a question without
 * one): fresh certificates at audit rate `auditRate`, over the two-tier
 * rule's calibration for every stream of a question with a second tier
 * when `semantic` is given (as the controller's are), else the question's.
 */
export function fleetTracks(
  table: Table,
  counters: readonly LiveCertificate[],
  auditRate: number,
  semantic?: readonly (LiveCertificate | null)[],
): FleetTracks {
  const taken = new Set(table.questions.map((q) => q.name));
  const tracks: FleetTrack[] = table.questions.map((q, slot) => ({
    slot,
    tier: "table",
    question: q.name,
  }));
  const names = table.questions.map((q) => q.name);
  const semanticTrack = table.questions.map(() => -1);
  const all = [...counters];
  table.questions.forEach((q, slot) => {
    const c = semantic?.[slot];
    if (c == null || q.semantic === undefined) return;
    semanticTrack[slot] = tracks.length;
    tracks.push({ slot, tier: "semantic", question: q.name });
    names.push(semanticRecordName(q.name, taken));
    all.push(c);
  });
  return {
    tracks,
    names,
    semanticTrack,
    counters: all,
    fresh(i: number): LiveCertificate {
      const q = table.questions[tracks[i]!.slot]!;
      const calibration = semantic !== undefined && q.semantic !== undefined
        ? q.semantic.calibration
        : q.calibration;
      return newCertificate(q, auditRate, calibration);
    },
  };
}
