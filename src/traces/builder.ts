/**
 * The set being built: traces added one at a time from one or more files,
 * equal texts interned, answers kept as written until each file ends, when
 * they are typed (see `answers.ts`) and checked against earlier files.
 *
 * @module
 */

import type { QuestionKind } from "../engine/mod.ts";
import {
  describeAnswers,
  typeAnswers,
  type TypedAnswers,
  yesNoBreak,
  yesNoBreakInWords,
} from "./answers.ts";
import { type LedgerEntry, ledgerKey, type PickLine } from "./ledger.ts";
import {
  FEEDBACK_SOURCES,
  type FeedbackOrigins,
  type FeedbackSourceName,
  type PickedDecision,
  type QuestionAnswers,
  type TraceSet,
} from "./types.ts";

/** How a feedback line's decision was picked, as `TraceSetBuilder.setOrigin` takes it. */
export interface LineOrigin {
  source: string;
  /** The decision's name (`audit` or `id`), when the line gives one. */
  id: string | undefined;
  /** NaN when not said. */
  rate: number;
  /** ms since the epoch; NaN when not said. */
  decidedAt: number;
  issuer: string | undefined;
  bundle: string | undefined;
}

/** Interned names, each with its index. */
class Names {
  readonly list: string[] = [];
  readonly #ids = new Map<string, number>();
  id(name: string | undefined): number {
    if (name === undefined) return -1;
    let id = this.#ids.get(name);
    if (id === undefined) {
      id = this.list.length;
      this.#ids.set(name, id);
      this.list.push(name);
    }
    return id;
  }
}

/** A question across all files. */
interface Question {
  name: string;
  kind: QuestionKind | undefined;
  /** How its answers read in the first file that answered it, for error messages. */
  firstTyped: TypedAnswers | undefined;
  firstFile: string;
  options: string[];
  optionIndex: Map<string, number>;
  /** Per row; within the current file, an index into that file's distinct answers. */
  labels: Int32Array;
}

/** A question's distinct answers in the current file, in order of first appearance. */
interface FileAnswers {
  question: Question;
  ids: Map<string, number>;
  distinct: string[];
  /** Per distinct answer, how many traces gave it and where it first appeared (`file:line`, when known). */
  counts: number[];
  where: (string | undefined)[];
}

/**
 * Bytes a distinct text costs beyond its characters: V8's string header, its
 * entry in the interning table and the table's spare room. `deno task
 * bench:traces` measures about 30 on the heap (190,000 distinct texts of about
 * 65 characters held 19 MB); 64 keeps the estimate on the safe side.
 */
const TEXT_OVERHEAD = 64;

/** Bytes per trace in the texts array, with its spare room. */
const ROW_BYTES = 8;

const TWO_BYTE = /[\u0100-\uffff]/;

/** Bytes V8 needs for `text`: one per character when all are Latin-1, else two. */
function textBytes(text: string): number {
  return TEXT_OVERHEAD + text.length * (TWO_BYTE.test(text) ? 2 : 1);
}

/** A typed array of at least `size` elements holding `old`'s, the rest `fill`. */
function grown<T extends Int32Array | Float64Array>(
  old: T,
  size: number,
  fill: number,
): T {
  if (old.length >= size) return old;
  const next = new (old.constructor as new (n: number) => T)(
    Math.max(size, old.length * 2, 1024),
  );
  next.set(old);
  next.fill(fill, old.length);
  return next;
}

/**
 * Builds a `TraceSet`. Call `beginFile`, then `addTrace` and `answer` per
 * trace, then `endFile`; after the last file, `finish`.
 *
 * @example
 * ```ts
 * const b = new TraceSetBuilder();
 * b.beginFile("a.jsonl");
 * const row = b.addTrace("where is my card", NaN, undefined);
 * b.answer(row, "intent", "card_arrival");
 * b.endFile();
 * const set = b.finish();
 * ```
 */
export class TraceSetBuilder {
  readonly #texts: string[] = [];
  readonly #interned = new Map<string, string>();
  #times: Float64Array | null = null;
  #groups: Int32Array | null = null;
  readonly #groupIds = new Map<string, number>();
  readonly #groupNames: string[] = [];
  #feedback: Uint8Array | null = null;
  readonly #questions = new Map<string, Question>();
  readonly #files: string[] = [];
  #file: string | undefined;
  #fileStart = 0;
  #fileAnswers = new Map<string, FileAnswers>();
  #textBytes = 0;
  readonly #warn: ((line: string) => void) | undefined;
  /** Names of the audits and decisions read so far (a feedback line's `"audit"` or `"id"`). */
  readonly #audits = new Set<string>();
  #repeatedAudits = 0;
  #sources: Uint8Array | null = null;
  #rates: Float64Array | null = null;
  #decidedAt: Float64Array | null = null;
  #issuers: Int32Array | null = null;
  #bundles: Int32Array | null = null;
  readonly #issuerNames = new Names();
  readonly #bundleNames = new Names();
  readonly #ledger = new Map<string, LedgerEntry>();
  readonly #ids = new Map<number, string>();
  readonly #picks = new Map<string, PickedDecision>();

  /**
   * True the first time audit (or decision) `name` is seen across every
   * file; false (and counted in `repeatedAudits`) after, so the line is left
   * out: each replica of a fleet logs the audits it is sent, a replay
   * included, and a decision gets one label.
   */
  firstAudit(name: string): boolean {
    if (this.#audits.has(name)) {
      this.#repeatedAudits++;
      return false;
    }
    this.#audits.add(name);
    this.#textBytes += TEXT_OVERHEAD + name.length;
    return true;
  }

  /** Feedback lines left out because their audit was read before. */
  get repeatedAudits(): number {
    return this.#repeatedAudits;
  }

  /** Records how feedback line `row` was picked (see `FeedbackOrigins`). */
  setOrigin(row: number, origin: LineOrigin): void {
    const code = FEEDBACK_SOURCES.indexOf(
      origin.source as FeedbackSourceName,
    );
    this.#sources = grownBytes(this.#sources, row + 1);
    this.#sources[row] = code <= 0 ? 1 : code;
    this.#rates = grown(this.#rates ?? new Float64Array(0), row + 1, NaN);
    this.#rates[row] = origin.rate;
    this.#decidedAt = grown(
      this.#decidedAt ?? new Float64Array(0),
      row + 1,
      NaN,
    );
    this.#decidedAt[row] = origin.decidedAt;
    this.#issuers = grown(this.#issuers ?? new Int32Array(0), row + 1, -1);
    this.#issuers[row] = this.#issuerNames.id(origin.issuer);
    this.#bundles = grown(this.#bundles ?? new Int32Array(0), row + 1, -1);
    this.#bundles[row] = this.#bundleNames.id(origin.bundle);
    if (origin.id !== undefined) this.#ids.set(row, origin.id);
  }

  /**
   * Adds a picked decision: its text as a row that answers nothing. One
   * already read (from another file) is kept once.
   */
  addPick(pick: PickLine): void {
    if (this.#picks.has(pick.id)) return;
    const row = this.addTrace(pick.text, NaN, undefined);
    const { text: _, ...rest } = pick;
    this.#picks.set(pick.id, { ...rest, row });
  }

  /** Adds a ledger entry; one already read (from another file) is kept once. */
  addLedger(entry: LedgerEntry): void {
    const key = ledgerKey(entry);
    if (!this.#ledger.has(key)) this.#ledger.set(key, entry);
  }

  /**
   * A new, empty set; `warn` hears of answers that look like a slip (a few
   * that keep a yes/no question from being yes/no, see `yesNoBreak`).
   */
  constructor(warn?: (line: string) => void) {
    this.#warn = warn;
  }

  /** Traces added so far. */
  get rows(): number {
    return this.#texts.length;
  }

  /** Distinct texts among them. */
  get distinctTexts(): number {
    return this.#interned.size;
  }

  /**
   * About how many bytes of memory the traces added so far hold: distinct
   * texts with their share of the interning table, a slot per trace, and the
   * label, time and group arrays.
   */
  get heldBytes(): number {
    let bytes = this.#textBytes + ROW_BYTES * this.#texts.length;
    for (const q of this.#questions.values()) bytes += q.labels.byteLength;
    bytes += this.#times?.byteLength ?? 0;
    bytes += this.#groups?.byteLength ?? 0;
    bytes += this.#feedback?.byteLength ?? 0;
    bytes += (this.#sources?.byteLength ?? 0) +
      (this.#rates?.byteLength ?? 0) + (this.#decidedAt?.byteLength ?? 0) +
      (this.#issuers?.byteLength ?? 0) + (this.#bundles?.byteLength ?? 0);
    return bytes;
  }

  /** Starts a file; `name` is used in error messages. */
  beginFile(name: string): void {
    if (this.#file !== undefined) {
      throw new Error(`beginFile(${name}) while ${this.#file} is open`);
    }
    this.#file = name;
    this.#files.push(name);
    this.#fileStart = this.#texts.length;
    this.#fileAnswers = new Map();
  }

  /**
   * Adds a trace: its text, its time (NaN for none), group (undefined for
   * none) and whether it is a line of a service's feedback log; returns its
   * row.
   */
  addTrace(
    text: string,
    time: number,
    group: string | undefined,
    fromFeedback = false,
  ): number {
    const row = this.#texts.length;
    let shared = this.#interned.get(text);
    if (shared === undefined) {
      this.#interned.set(text, shared = text);
      this.#textBytes += textBytes(text);
    }
    this.#texts.push(shared);
    if (!Number.isNaN(time)) {
      this.#times = grown(this.#times ?? new Float64Array(0), row + 1, NaN);
      this.#times[row] = time;
    }
    if (group !== undefined) {
      let id = this.#groupIds.get(group);
      if (id === undefined) {
        id = this.#groupNames.length;
        this.#groupIds.set(group, id);
        this.#groupNames.push(group);
      }
      this.#groups = grown(this.#groups ?? new Int32Array(0), row + 1, -1);
      this.#groups[row] = id;
    }
    if (fromFeedback) {
      this.#feedback = grownBytes(this.#feedback, row + 1);
      this.#feedback[row] = 1;
    }
    return row;
  }

  /**
   * Records the answer of trace `row` to `question`, as written (JSON
   * booleans as `"true"` / `"false"`); `where` (`file:line`) names it in
   * warnings.
   */
  answer(row: number, question: string, written: string, where?: string): void {
    let fa = this.#fileAnswers.get(question);
    if (fa === undefined) {
      let q = this.#questions.get(question);
      if (q === undefined) {
        q = {
          name: question,
          kind: undefined,
          firstTyped: undefined,
          firstFile: this.#file ?? "",
          options: [],
          optionIndex: new Map(),
          labels: new Int32Array(0),
        };
        this.#questions.set(question, q);
      }
      fa = { question: q, ids: new Map(), distinct: [], counts: [], where: [] };
      this.#fileAnswers.set(question, fa);
    }
    let id = fa.ids.get(written);
    if (id === undefined) {
      id = fa.distinct.length;
      fa.ids.set(written, id);
      fa.distinct.push(written);
      fa.counts.push(0);
      fa.where.push(where);
    }
    fa.counts[id]!++;
    const q = fa.question;
    q.labels = grown(q.labels, row + 1, -1);
    q.labels[row] = id;
  }

  /** Ends the current file: types its answers; a question typed differently than in an earlier file is an error. */
  endFile(): void {
    const file = this.#file ?? "";
    const end = this.#texts.length;
    for (const fa of this.#fileAnswers.values()) {
      const q = fa.question;
      const typed = typeAnswers(fa.distinct);
      const slip = this.#warn === undefined
        ? null
        : yesNoBreak(fa.distinct, fa.counts);
      if (slip !== null) {
        this.#warn!(
          `${file}: ${
            yesNoBreakInWords(q.name, fa.distinct, fa.counts, fa.where, slip)
          }`,
        );
      }
      if (q.kind !== undefined && q.kind !== typed.kind) {
        throw new TypeError(
          `${file}: question "${q.name}" is ${
            describeAnswers(typed)
          } here but ${
            describeAnswers(q.firstTyped!)
          } in ${q.firstFile}; its answers must be of one kind in every file`,
        );
      }
      if (q.kind === undefined) {
        q.kind = typed.kind;
        q.firstTyped = typed;
        q.firstFile = file;
      }
      // Options in order of first appearance; yes/no's always true, false.
      const optionAt = typed.options.map((option) => {
        let at = q.optionIndex.get(option);
        if (at === undefined) {
          at = q.options.length;
          q.options.push(option);
          q.optionIndex.set(option, at);
        }
        return at;
      });
      const toGlobal = typed.index.map((i) => optionAt[i]!);
      const labels = q.labels;
      const stop = Math.min(end, labels.length);
      for (let row = this.#fileStart; row < stop; row++) {
        const id = labels[row]!;
        if (id >= 0) labels[row] = toGlobal[id]!;
      }
    }
    this.#file = undefined;
  }

  /** The traces of every file; a set in which no trace answers any question is an error. */
  finish(): TraceSet {
    if (this.#file !== undefined) this.endFile();
    const n = this.#texts.length;
    const questions: QuestionAnswers[] = [];
    for (const q of this.#questions.values()) {
      if (q.kind === undefined) continue;
      questions.push({
        name: q.name,
        kind: q.kind,
        options: q.options,
        labels: exactly(q.labels, n, -1),
      });
    }
    if (questions.length === 0) {
      throw new RangeError(
        `${this.#files.join(", ")}: no trace answers any question`,
      );
    }
    return {
      texts: this.#texts,
      questions,
      times: this.#times === null ? null : exactly(this.#times, n, NaN),
      groups: this.#groups === null ? null : exactly(this.#groups, n, -1),
      groupNames: this.#groupNames,
      feedback: this.#feedback === null
        ? null
        : grownBytes(this.#feedback, n).slice(0, n),
      ...(this.#sources === null ? {} : { origins: this.#origins(n) }),
      ...(this.#ledger.size === 0
        ? {}
        : { ledger: [...this.#ledger.values()] }),
      ...(this.#picks.size === 0 ? {} : { picks: [...this.#picks.values()] }),
    };
  }

  #origins(n: number): FeedbackOrigins | null {
    if (this.#sources === null) return null;
    return {
      source: grownBytes(this.#sources, n).slice(0, n),
      rate: exactly(this.#rates!, n, NaN),
      decidedAt: exactly(this.#decidedAt!, n, NaN),
      issuer: exactly(this.#issuers!, n, -1),
      bundle: exactly(this.#bundles!, n, -1),
      issuers: this.#issuerNames.list,
      bundles: this.#bundleNames.list,
      ids: this.#ids,
    };
  }
}

/** A byte array of at least `size` elements holding `old`'s (none: zeros), the rest 0. */
function grownBytes(old: Uint8Array | null, size: number): Uint8Array {
  if (old !== null && old.length >= size) return old;
  const next = new Uint8Array(Math.max(size, (old?.length ?? 0) * 2, 1024));
  if (old !== null) next.set(old);
  return next;
}

/** `a` cut or padded with `fill` to exactly `n` elements. */
function exactly<T extends Int32Array | Float64Array>(
  a: T,
  n: number,
  fill: number,
): T {
  if (a.length === n) return a;
  if (a.length > n) return a.slice(0, n) as T;
  return grown(a, n, fill).slice(0, n) as T;
}
