/**
 * The decision ledger a serving process keeps for its feedback log: per
 * question, bundle and stretch of wall-clock time, how many decisions it
 * made, certified and picked for a label (the calibration coin), and the
 * text of every picked decision, so that `train` knows every denominator
 * and can count a pick never answered where the new table would certify
 * it (`src/traces/ledger.ts` has the lines' format, `src/train/
 * feedback_sample.ts` what training makes of them).
 *
 * Stretches are `stretchMs` long, aligned on the wall clock; `drain` hands
 * the lines of every stretch that has ended (all of them with `all`).
 * Recording a decision is a few array and map operations; the picked texts
 * wait in bounded memory (`maxPickBytes`): past it, a pick keeps its count
 * but not its text (training then counts it, if never answered, at every
 * threshold).
 *
 * @module
 */

import {
  type LedgerEntry,
  ledgerLine,
  type PickLine,
  pickLine,
} from "../traces/mod.ts";

/** How long a stretch of the ledger lasts by default: 5 seconds. */
export const LEDGER_STRETCH_MS = 5_000;

/** Most bytes of picked texts waiting for the next drain by default: 4 MiB. */
export const MAX_PICK_BYTES = 4 * 1024 * 1024;

/** Options of `DecisionLedger`. */
export interface LedgerOptions {
  /** The issuing process's id (8 hex digits), as its decision ids carry it. */
  issuer: string;
  /** Length of a stretch in ms (`LEDGER_STRETCH_MS` by default). */
  stretchMs?: number;
  /** Most bytes of picked texts kept between drains (`MAX_PICK_BYTES` by default). */
  maxPickBytes?: number;
  /** Hears of each stretch that ended, every question together (for a chart of the traffic). */
  onStretch?: (summary: StretchSummary) => void;
}

/** One stretch of every question's decisions together. */
export interface StretchSummary {
  /** ms since the epoch: `from` included, `to` excluded. */
  from: number;
  to: number;
  decisions: number;
  certified: number;
  /** Model calls the decisions cost: uncertified answers and audits. */
  calls: number;
}

/** One question's counts in the open stretch. */
interface Counts {
  question: string;
  bundle: string;
  rate: number;
  certifiable: boolean;
  decisions: number;
  certified: number;
  picked: number;
  pickedCertified: number;
}

/** The decision ledger of one process (see the module doc). */
export class DecisionLedger {
  readonly issuer: string;
  readonly #stretchMs: number;
  readonly #maxPickBytes: number;
  readonly #onStretch: ((summary: StretchSummary) => void) | undefined;
  /** The open stretch's start (ms), and its counts by question, bundle and rate. */
  #from = -Infinity;
  #open = new Map<string, Counts>();
  /** Lines of stretches that ended, waiting for `drain`. */
  #closed: string[] = [];
  #picks: string[] = [];
  #pickBytes = 0;
  /** Picks whose text was not kept (memory full). */
  #textless = 0;

  /** An empty ledger. */
  constructor(options: LedgerOptions) {
    this.issuer = options.issuer;
    this.#stretchMs = options.stretchMs ?? LEDGER_STRETCH_MS;
    this.#maxPickBytes = options.maxPickBytes ?? MAX_PICK_BYTES;
    this.#onStretch = options.onStretch;
    if (!(this.#stretchMs > 0)) {
      throw new RangeError(
        `A ledger stretch must last more than 0 ms: got ${this.#stretchMs}`,
      );
    }
  }

  /** Picks whose text was not kept because the memory for them was full. */
  get textless(): number {
    return this.#textless;
  }

  /**
   * Records one decision of `question` by `bundle` at wall-clock `now`
   * (ms): whether the question could be certified at all, whether this
   * answer was, and, when the coin of probability `rate` picked it, the
   * pick (`pick`: its name, and the text it was about).
   */
  record(
    now: number,
    question: string,
    bundle: string,
    rate: number,
    certifiable: boolean,
    certified: boolean,
    pick?: { id: string; text: string },
  ): void {
    if (now >= this.#from + this.#stretchMs || now < this.#from) {
      this.#close(now);
    }
    const key = `${question}\u0000${bundle}\u0000${rate}`;
    let c = this.#open.get(key);
    if (c === undefined) {
      c = {
        question,
        bundle,
        rate,
        certifiable,
        decisions: 0,
        certified: 0,
        picked: 0,
        pickedCertified: 0,
      };
      this.#open.set(key, c);
    }
    c.certifiable ||= certifiable;
    c.decisions++;
    if (certified) c.certified++;
    if (pick === undefined) return;
    c.picked++;
    if (certified) c.pickedCertified++;
    const line = pickLine(
      {
        question,
        text: pick.text,
        id: pick.id,
        decidedAt: now,
        issuer: this.issuer,
        bundle,
        rate,
      } satisfies PickLine,
    );
    if (this.#pickBytes + line.length > this.#maxPickBytes) {
      this.#textless++;
      return;
    }
    this.#picks.push(line);
    this.#pickBytes += line.length;
  }

  /**
   * The lines waiting to be written: the picks' texts so far and the
   * ledger lines of the stretches that ended by `now` (with `all`, the open
   * one too, ending now). Empty when there is nothing.
   */
  drain(now: number, all = false): string {
    if (all || now >= this.#from + this.#stretchMs) this.#close(now, all);
    const out = this.#picks.join("") + this.#closed.join("");
    this.#picks = [];
    this.#pickBytes = 0;
    this.#closed = [];
    return out;
  }

  /** Ends the open stretch (at its natural end, or at `now` with `early`) and starts the one holding `now`. */
  #close(now: number, early = false): void {
    if (this.#open.size > 0) {
      const to = early ? now : this.#from + this.#stretchMs;
      const summary: StretchSummary = {
        from: this.#from,
        to: Math.max(to, this.#from),
        decisions: 0,
        certified: 0,
        calls: 0,
      };
      for (const c of this.#open.values()) {
        summary.decisions += c.decisions;
        summary.certified += c.certified;
        summary.calls += c.decisions - c.certified + c.pickedCertified;
        const entry: LedgerEntry = {
          issuer: this.issuer,
          question: c.question,
          bundle: c.bundle,
          from: this.#from,
          to: Math.max(to, this.#from),
          rate: c.rate,
          certifiable: c.certifiable,
          decisions: c.decisions,
          certified: c.certified,
          picked: c.picked,
          pickedCertified: c.pickedCertified,
        };
        this.#closed.push(ledgerLine(entry));
      }
      this.#open = new Map();
      this.#onStretch?.(summary);
    }
    this.#from = early && now < this.#from + this.#stretchMs
      ? now
      : now - (now % this.#stretchMs);
  }
}
