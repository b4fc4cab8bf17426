/**
 * The side file of a feedback log (`feedback.jsonl` -> `feedback.refused.jsonl`):
 * feedback items that are no label (an id no key signed, one given for
 * another text or question, one whose numbers are unusable) are written
 * here for an operator to read, never to the log a retrain learns from.
 * The file is capped: once a write would take it past `maxBytes`, items are
 * only counted (`dropped`), so a flood of forged items grows the disk by
 * at most the cap, however long it lasts. A write that fails is reported
 * once and never fails the request: the side file is an aid, not a record.
 *
 * @module
 */

/** Most bytes of the side file by default: 8 MiB. */
export const REFUSED_LOG_MAX_BYTES = 8 * 1024 * 1024;

/** Longest text, id or answer (UTF-16 units) a side line keeps; longer ones are cut. */
const FIELD_CHARS = 512;

/** One item that was no label, as the side file keeps it. */
export interface RefusedLine {
  question: string;
  text: string;
  answer: string | boolean;
  id: string;
  reason: string;
}

/** Takes items that were no label, seen at a time. */
export type RefusedSink = (
  items: readonly RefusedLine[],
  time: Date,
) => Promise<void>;

/** An open side file. */
export interface RefusedLog {
  readonly path: string;
  /** Appends `items`, seen at `time`, while the cap allows; else counts them dropped. */
  append: RefusedSink;
  /** Items written, and items only counted past the cap (or after a failed write). */
  readonly counts: { written: number; dropped: number };
  close(): Promise<void>;
}

/**
 * The side file's path for feedback log `path`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { refusedPath } from "./refused_log.ts";
 * assert.equal(refusedPath("logs/feedback.jsonl"), "logs/feedback.refused.jsonl");
 * assert.equal(refusedPath("labels.log"), "labels.log.refused.jsonl");
 * ```
 */
export function refusedPath(path: string): string {
  return path.endsWith(".jsonl")
    ? `${path.slice(0, -".jsonl".length)}.refused.jsonl`
    : `${path}.refused.jsonl`;
}

function cut(text: string): string {
  return text.length <= FIELD_CHARS ? text : `${text.slice(0, FIELD_CHARS)}…`;
}

/**
 * Opens (appending) the side file at `path`, capped at `maxBytes` counting
 * what it already holds; `warn` is told once when the cap is reached or a
 * write fails.
 */
export async function openRefusedLog(
  path: string,
  maxBytes = REFUSED_LOG_MAX_BYTES,
  warn: (line: string) => void = () => {},
): Promise<RefusedLog> {
  let size = 0;
  try {
    size = (await Deno.stat(path)).size;
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  const file = await Deno.open(path, {
    append: true,
    create: true,
    mode: 0o640,
  });
  const counts = { written: 0, dropped: 0 };
  const encoder = new TextEncoder();
  let full = false;
  let queue = Promise.resolve();
  const stop = (why: string) => {
    if (!full) warn(why);
    full = true;
  };
  return {
    path,
    counts,
    append(items, time) {
      const at = time.toISOString();
      const bytes = encoder.encode(
        items.map((i) =>
          JSON.stringify({
            at,
            reason: i.reason,
            question: cut(i.question),
            id: cut(i.id),
            answer: typeof i.answer === "string" ? cut(i.answer) : i.answer,
            text: cut(i.text),
          }) + "\n"
        ).join(""),
      );
      queue = queue.then(async () => {
        if (full || size + bytes.length > maxBytes) {
          counts.dropped += items.length;
          stop(
            `${path} holds ${size} bytes, its cap: items that are no label are counted, no longer written`,
          );
          return;
        }
        try {
          let off = 0;
          while (off < bytes.length) {
            off += await file.write(bytes.subarray(off));
          }
          size += bytes.length;
          counts.written += items.length;
        } catch (e) {
          counts.dropped += items.length;
          stop(
            `${path}: ${(e as Error)?.message ?? String(e)}; no longer written`,
          );
        }
      });
      return queue;
    },
    async close() {
      await queue;
      file.close();
    },
  };
}
