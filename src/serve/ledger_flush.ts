/**
 * Writing a serving process's decision ledger (`src/live/ledger.ts`) into
 * its feedback log: the picked decisions' texts and the ledger lines of
 * every stretch that ended, once a second, and everything left (the open
 * stretch ended now) when the process stops. A write that fails is
 * reported and its lines are kept for the next one, so a full disk loses
 * nothing it can later write.
 *
 * @module
 */

import type { FeedbackSink } from "./feedback_log.ts";

/** What is drained: `drain(now, all)` gives the lines to write (see `DecisionLedger`). */
export interface DrainsLines {
  drain(now: number, all?: boolean): string;
}

/** How often the ledger is written, in ms. */
export const LEDGER_FLUSH_MS = 1000;

/** A running ledger writer. */
export interface LedgerFlush {
  /** Writes what is waiting now (the open stretch too), and stops. */
  stop(): Promise<void>;
}

/**
 * Writes `ledger`'s lines to `sink` every `everyMs` (see the module doc);
 * `log` hears of a failed write. `clock` gives the wall-clock time (ms).
 */
export function startLedgerFlush(
  ledger: DrainsLines,
  sink: FeedbackSink,
  log: (message: string) => void,
  everyMs = LEDGER_FLUSH_MS,
  clock: () => number = Date.now,
): LedgerFlush {
  let pending = "";
  let writing: Promise<void> = Promise.resolve();
  const flush = (all: boolean) => {
    pending += ledger.drain(clock(), all);
    if (pending === "") return writing;
    const lines = pending;
    pending = "";
    writing = writing.then(() =>
      sink(lines).catch((e) => {
        // Kept for the next write: lines are whole, so order within them holds.
        pending = lines + pending;
        log(`decision ledger not written yet: ${(e as Error)?.message ?? e}`);
      })
    );
    return writing;
  };
  const timer = setInterval(() => void flush(false), everyMs);
  Deno.unrefTimer(timer);
  return {
    async stop() {
      clearInterval(timer);
      await flush(true);
    },
  };
}
