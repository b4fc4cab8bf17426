/**
 * `serve --live-journal FILE` (by default beside the feedback log, with a
 * live store): at start, what the last stop could not deliver to the store
 * is read and handed to the fleet to replay; as the store takes it, the
 * file is rewritten without it (removed once empty); at a stop, what is
 * still undelivered is written to it, and stderr says how many audits were
 * kept and where (or lost, without a journal).
 *
 * @module
 */

import {
  journalAudits,
  type JournalEntry,
  journalTemp,
  readJournal,
  writeJournal,
} from "../live/mod.ts";
import { oneLine, UsageError } from "./common.ts";

/** Where the lines of this module go (stderr by default). */
export type Say = (line: string) => void;

async function granted(
  name: "read" | "write",
  path: string,
): Promise<boolean> {
  const { state } = await Deno.permissions.query({ name, path });
  return state === "granted";
}

/** A serving run's live journal (see the module doc). */
export class LiveJournal {
  readonly path: string;
  /** The entries read at start, for the fleet to replay. */
  readonly entries: JournalEntry[];
  readonly #say: Say;
  #writes: Promise<void> = Promise.resolve();

  private constructor(path: string, entries: JournalEntry[], say: Say) {
    this.path = path;
    this.entries = entries;
    this.#say = say;
  }

  /**
   * Opens the journal at `path`: checks that it may be read and written
   * (and its temporary name written), reads it, and says on stderr what it
   * holds and which lines it skipped. Without the permissions: a
   * `UsageError` when the journal was `given` (`--live-journal`), else a
   * warning and null (the default beside the feedback log is then off).
   */
  static async open(
    path: string,
    given: boolean,
    say: Say = (line) => console.error(line),
  ): Promise<LiveJournal | null> {
    // Writing it whole renames FILE.tmp over FILE: both ways on both.
    const missing = [];
    for (const name of ["read", "write"] as const) {
      const paths = [];
      for (const p of [path, journalTemp(path)]) {
        if (!await granted(name, p)) paths.push(p);
      }
      if (paths.length > 0) missing.push(`--allow-${name}=${paths.join(",")}`);
    }
    if (missing.length > 0) {
      const why = `the live journal ${path} needs ${
        missing.join(" ")
      }: what a stop cannot deliver to the live store is kept there`;
      if (given) throw new UsageError(why);
      say(
        `warning: no live journal (${why}; give --live-journal FILE with those permissions to keep it elsewhere)`,
      );
      return null;
    }
    let read;
    try {
      read = await readJournal(path);
    } catch (e) {
      throw new UsageError(
        `Cannot read the live journal ${path}: ${oneLine(e)}`,
      );
    }
    for (const skipped of read.skipped) {
      say(`warning: live journal ${path}: ${skipped}`);
    }
    if (read.entries.length > 0) {
      const audits = journalAudits(read.entries);
      say(
        `live journal ${path}: ${audits} audit(s) and the decision counts a stop could not deliver (${
          read.entries.map((e) => `${e.replica} at ${e.written}`).join(", ")
        }): replaying them into the live store`,
      );
    }
    return new LiveJournal(path, read.entries, say);
  }

  /** Writes `entries` as the journal (after the writes before it); a failure is said on stderr and thrown. */
  write(entries: readonly JournalEntry[]): Promise<void> {
    const copy = [...entries];
    this.#writes = this.#writes.catch(() => {}).then(() =>
      writeJournal(this.path, copy)
    );
    return this.#writes;
  }

  /** The fleet delivered some entries: the journal keeps the `remaining` ones. */
  delivered(remaining: readonly JournalEntry[]): void {
    this.write(remaining).catch((e) =>
      this.#say(
        `warning: cannot rewrite the live journal ${this.path} (${
          oneLine(e)
        }): its delivered entries stay in it, and a replay counts nothing twice within an hour`,
      )
    );
  }

  /**
   * At a stop: writes what was not delivered and says how many audits it
   * kept (nothing when all was delivered: the journal is removed). False
   * when it could not be written (said on stderr, with what is lost).
   */
  async keep(left: readonly JournalEntry[]): Promise<boolean> {
    try {
      await this.write(left);
    } catch (e) {
      this.#say(
        `error: cannot write the live journal ${this.path} (${oneLine(e)}): ${
          undelivered(left)
        } lost`,
      );
      return false;
    }
    if (left.length > 0) {
      this.#say(
        `live store not reached before the stop: kept ${
          undelivered(left)
        } in the live journal ${this.path}; the next start replays them into the store`,
      );
    }
    return true;
  }
}

/** What `left` holds, in words. */
function undelivered(left: readonly JournalEntry[]): string {
  return `${
    journalAudits(left)
  } acknowledged audit(s) and the decision counts of ${
    left.reduce((n, e) => n + e.batches.length, 0)
  } batch(es)`;
}

/** Without a journal: says on stderr what a stop could not deliver (lost). */
export function reportLost(
  left: readonly JournalEntry[],
  say: Say = (line) => console.error(line),
): void {
  if (left.length === 0) return;
  say(
    `warning: live store not reached before the stop: ${
      undelivered(left)
    } lost (give --live-journal FILE, or --feedback-log, to keep them for the next start)`,
  );
}
