/**
 * The live journal (`serve --live-journal FILE`): what a fleet replica
 * could not deliver to its live store when it stopped, kept on local disk
 * for the next start to replay.
 *
 * An entry is one evidence pool's undelivered sync: the pool (the store's
 * bundle name), the epoch and reset generations it was counted in (empty
 * and -1 when the replica never reached the store), the record names of
 * its questions, and batches as the store applies them (`store.ts`): each
 * at most once by its id, each audit at most once by its tag. A batch whose
 * reply was lost keeps the id it was sent under, so replaying one the store
 * did apply counts nothing twice (while the store remembers the id:
 * `BATCH_MEMORY_MS`).
 *
 * The file is JSON Lines, one entry a line, each with `sum`: the first 32
 * hex digits of the SHA-256 of the line without it. It is written whole to
 * `FILE.tmp`, synced, then renamed over FILE, so a stop never leaves a
 * half-written journal; a line that does not check (a torn tail, a line
 * damaged on disk) is named and skipped, never read as evidence.
 *
 * @module
 */

import type { Batch } from "./store.ts";
import { hex } from "../format.ts";

/** One evidence pool's undelivered sync (see the module doc). */
export interface JournalEntry {
  /** The pool: the store's bundle name (`poolName`). */
  bundle: string;
  /** The store epoch it was counted in; "" when never read. */
  epoch: string;
  /** Record names of its questions, as the batches number them. */
  questions: string[];
  /** Per question, the reset generation it was counted in (-1: never read). */
  generations: number[];
  batches: Batch[];
  /** The replica that wrote it, and when (ISO 8601). */
  replica: string;
  written: string;
}

/** What reading a journal found. */
export interface JournalRead {
  entries: JournalEntry[];
  /** One line per line skipped, saying why (a torn tail, a damaged line). */
  skipped: string[];
}

/** Audits in `entries`. */
export function journalAudits(entries: readonly JournalEntry[]): number {
  let n = 0;
  for (const e of entries) for (const b of e.batches) n += b.audits.length;
  return n;
}

/** The name a journal is written under before it is renamed over `path`. */
export function journalTemp(path: string): string {
  return `${path}.tmp`;
}

/** The default journal beside a feedback log: `feedback.jsonl` gives `feedback.live-journal.jsonl`. */
export function journalBeside(feedbackLog: string): string {
  return feedbackLog.endsWith(".jsonl")
    ? `${feedbackLog.slice(0, -".jsonl".length)}.live-journal.jsonl`
    : `${feedbackLog}.live-journal.jsonl`;
}

async function sumOf(text: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(text),
  );
  return hex(new Uint8Array(digest).subarray(0, 16));
}

/** One entry as a journal line (with its `sum`, without the newline). */
export async function journalLine(entry: JournalEntry): Promise<string> {
  const body = JSON.stringify(entry);
  return `${body.slice(0, -1)},"sum":"${await sumOf(body)}"}`;
}

/**
 * The entries of a journal's text; a line that is not one (no newline at
 * the end, not JSON, a `sum` that does not match, a shape that is not an
 * entry's) is skipped and named in `skipped`.
 */
export async function parseJournal(text: string): Promise<JournalRead> {
  const out: JournalRead = { entries: [], skipped: [] };
  if (text === "") return out;
  const lines = text.split("\n");
  const torn = lines.pop()!; // "" when the text ends with a newline
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === "") continue;
    const entry = await checkedEntry(line);
    if (entry === null) {
      out.skipped.push(
        `line ${i + 1} does not check (${line.length} bytes): skipped`,
      );
    } else out.entries.push(entry);
  }
  if (torn !== "") {
    out.skipped.push(
      `the last line is torn (${torn.length} bytes without a newline): skipped`,
    );
  }
  return out;
}

async function checkedEntry(line: string): Promise<JournalEntry | null> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof parsed !== "object" || parsed === null) return null;
  const { sum, ...entry } = parsed as Record<string, unknown>;
  if (typeof sum !== "string" || sum !== await sumOf(JSON.stringify(entry))) {
    return null;
  }
  return isEntry(entry) ? entry : null;
}

const whole = (x: unknown) => Number.isSafeInteger(x);

function isFields(x: unknown): boolean {
  return Array.isArray(x) &&
    x.every((p) =>
      Array.isArray(p) && p.length === 2 && typeof p[0] === "string" &&
      whole(p[1])
    );
}

function isEntry(e: Record<string, unknown>): e is JournalEntry & {
  [k: string]: unknown;
} {
  const questions = e.questions;
  const generations = e.generations;
  const batches = e.batches;
  return typeof e.bundle === "string" && typeof e.epoch === "string" &&
    typeof e.replica === "string" && typeof e.written === "string" &&
    Array.isArray(questions) &&
    questions.every((q) => typeof q === "string") &&
    Array.isArray(generations) && generations.length === questions.length &&
    generations.every((g) => whole(g) && g >= -1) &&
    Array.isArray(batches) &&
    batches.every((b) =>
      typeof b === "object" && b !== null && typeof b.id === "string" &&
      Array.isArray(b.adds) && b.adds.length <= questions.length &&
      b.adds.every(isFields) && Array.isArray(b.audits) &&
      b.audits.every((a: Record<string, unknown>) =>
        typeof a === "object" && a !== null && typeof a.id === "string" &&
        whole(a.ttlMs) && whole(a.question) && (a.question as number) >= 0 &&
        (a.question as number) < questions.length && isFields(a.fields)
      )
    );
}

/**
 * Reads the journal at `path`: empty when there is none. Throws what
 * reading throws otherwise (a permission, a folder in its place).
 */
export async function readJournal(path: string): Promise<JournalRead> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { entries: [], skipped: [] };
    throw e;
  }
  return await parseJournal(text);
}

/**
 * Writes `entries` as the journal at `path`, whole: to `journalTemp(path)`,
 * synced to disk, then renamed over `path` (a crash leaves the journal
 * before or after, never half of it). No entries: the journal is removed.
 */
export async function writeJournal(
  path: string,
  entries: readonly JournalEntry[],
): Promise<void> {
  if (entries.length === 0) {
    await Deno.remove(path).catch((e) => {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    });
    return;
  }
  const lines = await Promise.all(entries.map(journalLine));
  const temp = journalTemp(path);
  const file = await Deno.open(temp, {
    write: true,
    create: true,
    truncate: true,
  });
  try {
    const bytes = new TextEncoder().encode(lines.join("\n") + "\n");
    let at = 0;
    while (at < bytes.length) at += await file.write(bytes.subarray(at));
    await file.sync();
  } finally {
    file.close();
  }
  await Deno.rename(temp, path);
}
