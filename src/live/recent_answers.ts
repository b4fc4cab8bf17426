/**
 * The uncertified answers served lately, so that feedback on one is counted
 * as it was served (see `LiveController.takeRecent`). Bounded twice: at most
 * `RECENT_ANSWERS` entries and at most `RECENT_ANSWER_BYTES` of keys and
 * entries, the oldest dropped first. A text longer than
 * `RECENT_KEY_CHARS` is remembered by its SHA-256, never by itself, so a
 * 1 MB text costs the same few dozen bytes as a short one. An entry holds
 * the table that answered only weakly: a table no longer served is freed,
 * and its entries are then misses.
 *
 * @module
 */

import { createHash } from "node:crypto";
import type { Table } from "../engine/mod.ts";
import type { LiveCertificate } from "../guarantee/mod.ts";

/** Most uncertified answers remembered. */
export const RECENT_ANSWERS = 16_384;
/** Most bytes the remembered answers take (keys and entries, as estimated by `entryBytes`): 4 MiB. */
export const RECENT_ANSWER_BYTES = 4 * 1024 * 1024;
/** Longest text (UTF-16 units) remembered as itself; longer ones by their SHA-256. */
export const RECENT_KEY_CHARS = 256;
/** Bytes an entry takes besides its key's characters (map slot, object, weak references). */
const ENTRY_OVERHEAD_BYTES = 160;

/** An uncertified answer as it was served: what feedback on it is counted against. */
export interface RecentAnswer {
  /** The table that answered. */
  table: Table;
  /** Its question's live certificate. */
  certificate: LiveCertificate;
  /** The table's answer. */
  answer: string | boolean;
  /** Its full-option confidence. */
  confidence: number;
  /** The decision id it was served with, if any. */
  id?: string;
}

interface Entry {
  table: WeakRef<Table>;
  certificate: WeakRef<LiveCertificate>;
  answer: string | boolean;
  confidence: number;
  id: string | undefined;
  bytes: number;
}

/**
 * The key of `text` for `question`: the text itself when short, else its
 * SHA-256 (base64), never the long text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { recentKey } from "./recent_answers.ts";
 * assert.ok(recentKey("intent", "x".repeat(1_000_000)).length < 100);
 * ```
 */
export function recentKey(question: string, text: string): string {
  if (text.length <= RECENT_KEY_CHARS) return `${question}\u0000=${text}`;
  const digest = createHash("sha256").update(text).digest("base64");
  return `${question}\u0000#${digest}`;
}

/** Options of `RecentAnswers`. */
export interface RecentAnswersOptions {
  /** Most entries (`RECENT_ANSWERS` by default). */
  capacity?: number;
  /** Most bytes (`RECENT_ANSWER_BYTES` by default). */
  budgetBytes?: number;
}

/** The recent uncertified answers (see the module doc). */
export class RecentAnswers {
  readonly #entries = new Map<string, Entry>();
  readonly #capacity: number;
  readonly #budget: number;
  #bytes = 0;

  /** An empty memory of at most `capacity` entries and `budgetBytes` bytes. */
  constructor(options: RecentAnswersOptions = {}) {
    this.#capacity = options.capacity ?? RECENT_ANSWERS;
    this.#budget = options.budgetBytes ?? RECENT_ANSWER_BYTES;
  }

  /** Entries kept now. */
  get size(): number {
    return this.#entries.size;
  }

  /** Bytes kept now (estimated; at most the budget). */
  get bytes(): number {
    return this.#bytes;
  }

  /** Remembers `answer` as the last one to `question` about `text`, dropping the oldest past either bound. */
  remember(question: string, text: string, answer: RecentAnswer): void {
    const key = recentKey(question, text);
    this.#drop(key);
    const bytes = (key.length + (answer.id?.length ?? 0)) * 2 +
      ENTRY_OVERHEAD_BYTES;
    this.#entries.set(key, {
      table: new WeakRef(answer.table),
      certificate: new WeakRef(answer.certificate),
      answer: answer.answer,
      confidence: answer.confidence,
      id: answer.id,
      bytes,
    });
    this.#bytes += bytes;
    while (
      this.#entries.size > this.#capacity || this.#bytes > this.#budget
    ) {
      this.#drop(this.#entries.keys().next().value!);
    }
  }

  /**
   * The last answer to `question` about `text`, taken once; undefined when
   * none is remembered or its table was freed. With `id`, only the answer
   * served with that decision id is taken.
   */
  take(question: string, text: string, id?: string): RecentAnswer | undefined {
    const key = recentKey(question, text);
    const found = this.#entries.get(key);
    if (found === undefined) return undefined;
    if (id !== undefined && found.id !== id) return undefined;
    this.#drop(key);
    const table = found.table.deref();
    const certificate = found.certificate.deref();
    if (table === undefined || certificate === undefined) return undefined;
    return {
      table,
      certificate,
      answer: found.answer,
      confidence: found.confidence,
      ...(found.id === undefined ? {} : { id: found.id }),
    };
  }

  #drop(key: string): void {
    const found = this.#entries.get(key);
    if (found === undefined) return;
    this.#entries.delete(key);
    this.#bytes -= found.bytes;
  }
}
