/**
 * Replaying one journal entry into the store (`FleetLive.addJournal`): the
 * batches a stop could not deliver, each under its own id so that nothing
 * counts twice. An entry counted before the store was ever read takes the
 * evidence pool and reset generations the store has now.
 *
 * @module
 */

import type { JournalEntry } from "./journal.ts";
import type { AuditOutcome, LiveStore } from "./store.ts";
import { StoreRejected } from "./store_errors.ts";

/** What replaying an entry did: why it was given up (null: replayed), and each audit's outcome. */
export interface Replayed {
  lost: string | null;
  outcomes: AuditOutcome[];
}

/**
 * Replays `e` into `store`. An entry the store refuses, or whose evidence
 * pool it no longer has, is given up (`lost` says why); rejects when the
 * store does not answer (the entry is to be tried again).
 */
export async function replayEntry(
  store: LiveStore,
  e: JournalEntry,
): Promise<Replayed> {
  const unknown = e.epoch === "" || e.generations.some((g) => g < 0);
  let epoch = e.epoch;
  let generations = e.generations;
  let lost: string | null = null;
  let outcomes: AuditOutcome[] = [];
  try {
    if (unknown) {
      // Counted before the store was ever read: in the pool and
      // generations the store has now.
      const probe = await store.sync({
        bundle: e.bundle,
        epoch: "",
        proposal: "",
        questions: e.questions,
        generations: e.questions.map(() => -1),
        batches: [],
      });
      if (epoch === "") epoch = probe.epoch;
      generations = generations.map((g, i) =>
        g < 0 ? (probe.generations[i] ?? 0) : g
      );
    }
    if (epoch === "") lost = "the store has no evidence of that bundle";
    else {
      const reply = await store.sync({
        bundle: e.bundle,
        epoch,
        proposal: "",
        questions: e.questions,
        generations,
        batches: e.batches,
      });
      if (reply.epoch !== epoch) {
        lost = "the store lost the evidence it was counted in";
      }
      outcomes = reply.audits.flat();
    }
  } catch (err) {
    if (!(err instanceof StoreRejected)) throw err;
    lost = `the store refused it: ${(err as Error).message}`;
  }
  return { lost, outcomes };
}
