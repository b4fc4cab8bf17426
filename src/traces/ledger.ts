/**
 * The decision ledger of a feedback log: per question, bundle, issuing
 * process and stretch of time, how many decisions the service made, how
 * many it certified, and how many it picked for a label (the calibration
 * coin, drawn for every decision whatever its verdict). A feedback line
 * names the decision it answers (its issuing process and decision time),
 * so `train` can tell, for each stretch, which picked decisions were never
 * answered, and whether every decision of a stretch got its label.
 *
 * A ledger line is `{"ledger": {"issuer", "question", "bundle", "from",
 * "to", "rate", "certifiable", "decisions", "certified", "picked",
 * "picked_certified"}}`: times are ISO 8601 (the stretch runs from `from`,
 * included, to `to`, excluded), `rate` is the probability with which each
 * decision was picked, and `certifiable` is false when nothing could be
 * certified for the question during the stretch (no bundle, the question
 * unknown to it or uncalibrated), whatever the texts were.
 *
 * @module
 */

/** One stretch of one question's decisions in one process. */
export interface LedgerEntry {
  /** The issuing process's random id (8 hex digits). */
  issuer: string;
  question: string;
  /** The bundle that answered: 16 hex digits (zeros when there was none). */
  bundle: string;
  /** The stretch, ms since the epoch: `from` included, `to` excluded. */
  from: number;
  to: number;
  /** Probability with which each decision was picked for a label. */
  rate: number;
  /** False when the question could not be certified at all during the stretch. */
  certifiable: boolean;
  decisions: number;
  certified: number;
  /** Decisions picked for a label (certified or not). */
  picked: number;
  /** Of them, the certified ones (audits). */
  pickedCertified: number;
}

/**
 * The ledger line of `entry`, newline-terminated.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ledgerLine, parseLedger } from "./ledger.ts";
 * const entry = {
 *   issuer: "0a1b2c3d", question: "topic", bundle: "0011223344556677",
 *   from: 0, to: 10_000, rate: 0.05, certifiable: true,
 *   decisions: 120, certified: 80, picked: 6, pickedCertified: 4,
 * };
 * assert.deepEqual(parseLedger(JSON.parse(ledgerLine(entry)).ledger), entry);
 * ```
 */
export function ledgerLine(entry: LedgerEntry): string {
  return `${
    JSON.stringify({
      ledger: {
        issuer: entry.issuer,
        question: entry.question,
        bundle: entry.bundle,
        from: new Date(entry.from).toISOString(),
        to: new Date(entry.to).toISOString(),
        rate: entry.rate,
        certifiable: entry.certifiable,
        decisions: entry.decisions,
        certified: entry.certified,
        picked: entry.picked,
        picked_certified: entry.pickedCertified,
      },
    })
  }\n`;
}

/**
 * A ledger line's `ledger` object read back; a string saying what is wrong
 * when it is not one (a count that is not a whole number, a rate outside
 * (0, 1], counts that do not fit together, a stretch that ends before it
 * starts).
 */
export function parseLedger(value: unknown): LedgerEntry | string {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return `"ledger" must be an object, got ${JSON.stringify(value)}`;
  }
  const o = value as Record<string, unknown>;
  for (const key of ["issuer", "question", "bundle", "from", "to"]) {
    if (typeof o[key] !== "string" || o[key] === "") {
      return `"ledger"."${key}" must be a non-empty string`;
    }
  }
  const from = Date.parse(o.from as string);
  const to = Date.parse(o.to as string);
  if (!(Number.isFinite(from) && Number.isFinite(to) && from <= to)) {
    return `"ledger" must run "from" a time "to" a later one: got ${
      JSON.stringify(o.from)
    } to ${JSON.stringify(o.to)}`;
  }
  const rate = o.rate;
  if (typeof rate !== "number" || !(rate > 0 && rate <= 1)) {
    return `"ledger"."rate" must be a probability in (0, 1], got ${
      JSON.stringify(rate)
    }`;
  }
  if (typeof o.certifiable !== "boolean") {
    return `"ledger"."certifiable" must be true or false`;
  }
  const counts: number[] = [];
  for (const key of ["decisions", "certified", "picked", "picked_certified"]) {
    const n = o[key];
    if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) {
      return `"ledger"."${key}" must be a whole number >= 0, got ${
        JSON.stringify(n)
      }`;
    }
    counts.push(n);
  }
  const [decisions, certified, picked, pickedCertified] = counts as [
    number,
    number,
    number,
    number,
  ];
  if (
    certified > decisions || picked > decisions ||
    pickedCertified > Math.min(picked, certified) ||
    (!o.certifiable && certified > 0)
  ) {
    return `"ledger" counts do not fit together (decisions ${decisions}, certified ${certified}, picked ${picked}, picked_certified ${pickedCertified}, certifiable ${o.certifiable})`;
  }
  return {
    issuer: o.issuer as string,
    question: o.question as string,
    bundle: o.bundle as string,
    from,
    to,
    rate,
    certifiable: o.certifiable,
    decisions,
    certified,
    picked,
    pickedCertified,
  };
}

/** The key that names one ledger entry (a fleet's files may each hold it once). */
export function ledgerKey(e: LedgerEntry): string {
  return `${e.issuer}\u0000${e.question}\u0000${e.bundle}\u0000${e.from}\u0000${e.rate}`;
}

/** A decision picked for a label, as a `pick` line holds it (see `PickedDecision`, without its row). */
export interface PickLine {
  question: string;
  text: string;
  id: string;
  /** ms since the epoch. */
  decidedAt: number;
  issuer: string;
  bundle: string;
  rate: number;
}

/**
 * The `pick` line of a decision picked for a label: `{"pick": {"question",
 * "text", "id", "decided_at", "issuer", "bundle", "rate"}}`. The service
 * writes it when it picks, so that a pick never answered still has its
 * text: training then counts it as a disagreement where the new table
 * would certify it, not at every threshold.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parsePick, pickLine } from "./ledger.ts";
 * const pick = {
 *   question: "topic", text: "where is my card", id: "00ff00ff00ff00ff",
 *   decidedAt: 1000, issuer: "0a1b2c3d", bundle: "0011223344556677", rate: 0.05,
 * };
 * assert.deepEqual(parsePick(JSON.parse(pickLine(pick)).pick), pick);
 * ```
 */
export function pickLine(p: PickLine): string {
  return `${
    JSON.stringify({
      pick: {
        question: p.question,
        text: p.text,
        id: p.id,
        decided_at: new Date(p.decidedAt).toISOString(),
        issuer: p.issuer,
        bundle: p.bundle,
        rate: p.rate,
      },
    })
  }\n`;
}

/** A `pick` line's object read back; a string saying what is wrong when it is not one. */
export function parsePick(value: unknown): PickLine | string {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return `"pick" must be an object, got ${JSON.stringify(value)}`;
  }
  const o = value as Record<string, unknown>;
  for (const key of ["question", "id", "decided_at", "issuer", "bundle"]) {
    if (typeof o[key] !== "string" || o[key] === "") {
      return `"pick"."${key}" must be a non-empty string`;
    }
  }
  if (typeof o.text !== "string") return `"pick"."text" must be a string`;
  const decidedAt = Date.parse(o.decided_at as string);
  if (!Number.isFinite(decidedAt)) {
    return `"pick"."decided_at" must be a time, got ${
      JSON.stringify(o.decided_at)
    }`;
  }
  const rate = o.rate;
  if (typeof rate !== "number" || !(rate > 0 && rate <= 1)) {
    return `"pick"."rate" must be a probability in (0, 1], got ${
      JSON.stringify(rate)
    }`;
  }
  return {
    question: o.question as string,
    text: o.text,
    id: o.id as string,
    decidedAt,
    issuer: o.issuer as string,
    bundle: o.bundle as string,
    rate,
  };
}
