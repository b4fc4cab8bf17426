/**
 * Figures in words: every number the page shows goes through one of these,
 * so a missing or undefined figure reads "—" everywhere, never 0 or NaN.
 *
 * @module
 */

import type { QuestionSummary } from "./stats.ts";

const intFormat = new Intl.NumberFormat(undefined, {
  maximumFractionDigits: 0,
});

const SUPERSCRIPT = "⁰¹²³⁴⁵⁶⁷⁸⁹";

/** Whether `x` is a finite number. */
export function isNum(x: unknown): x is number {
  return typeof x === "number" && Number.isFinite(x);
}

/** A whole number with the reader's thousands separator; "—" when absent. */
export function fmtInt(n: number | null | undefined): string {
  return isNum(n) ? intFormat.format(n) : "—";
}

/** A share as a percentage: "87.3%", "<0.1%", ">99.9%"; "—" when absent. */
export function fmtPct(x: number | null | undefined, digits = 1): string {
  if (!isNum(x)) return "—";
  const p = x * 100;
  if (p > 0 && p < 0.1) return "<0.1%";
  if (p < 100 && p > 99.95) return ">99.9%";
  return `${p.toFixed(digits)}%`;
}

/** A positive number that may be astronomically large: "3.58", "412", "1.3 × 10³⁵". */
export function fmtEvidence(x: number | null | undefined): string {
  if (x === Infinity) return "∞";
  if (!isNum(x)) return "—";
  if (x < 10) return x.toFixed(2);
  if (x < 1e5) return intFormat.format(x);
  const exp = Math.floor(Math.log10(x));
  const mantissa = x / 10 ** exp;
  const sup = [...String(exp)].map((d) => SUPERSCRIPT[Number(d)]).join("");
  return `${mantissa.toFixed(1)} × 10${sup}`;
}

/** A duration in microseconds, in the unit that reads best: "8.5 µs", "412 µs", "1.25 ms". */
export function fmtLatency(us: number | null | undefined): string {
  if (!isNum(us)) return "—";
  if (us === 0) return "0";
  if (us < 10) return `${us.toFixed(1)} µs`;
  if (us < 1000) return `${Math.round(us)} µs`;
  if (us < 1e6) return `${(us / 1000).toFixed(us < 1e4 ? 2 : 1)} ms`;
  return `${(us / 1e6).toFixed(2)} s`;
}

/** A latency for an axis tick: as `fmtLatency`, without trailing zeros ("1 ms", "2.5 ms"). */
export function fmtLatencyTick(us: number): string {
  return fmtLatency(us).replace(/\.0+ /, " ").replace(/(\.\d*?)0+ /, "$1 ");
}

/** Requests per second: "0", "3.25", "41.5", "1,204"; "—" when absent. */
export function fmtRate(r: number | null | undefined): string {
  if (!isNum(r)) return "—";
  if (r === 0) return "0";
  if (r < 10) return r.toFixed(2);
  if (r < 100) return r.toFixed(1);
  return intFormat.format(r);
}

/** A duration in seconds, in two units: "12 s", "4 min 10 s", "3 h 5 min", "2.5 days". */
export function fmtDuration(sec: number | null | undefined): string {
  if (!isNum(sec)) return "—";
  if (sec < 1) return `${Math.round(sec * 1000)} ms`;
  if (sec < 60) return `${sec.toFixed(sec < 10 ? 1 : 0)} s`;
  const m = Math.floor(sec / 60);
  if (m < 60) return `${m} min ${Math.floor(sec % 60)} s`;
  const hours = Math.floor(m / 60);
  if (hours < 48) return `${hours} h ${m % 60} min`;
  return `${(sec / 86400).toFixed(1)} days`;
}

/** A duration in one short unit, for big figures: "81 s", "21.5 min", "3.2 h". */
export function fmtDurationShort(sec: number | null | undefined): string {
  if (!isNum(sec)) return "—";
  if (sec === 0) return "0 s";
  if (sec < 1) return `${Math.round(sec * 1000)} ms`;
  if (sec < 100) return `${sec.toFixed(sec < 10 ? 1 : 0)} s`;
  if (sec < 6000) return `${(sec / 60).toFixed(1)} min`;
  if (sec < 172800) return `${(sec / 3600).toFixed(1)} h`;
  return `${(sec / 86400).toFixed(1)} days`;
}

/** An amount of money with no currency sign: "0.00", "12.40", "0.0020". */
export function fmtMoney(x: number | null | undefined): string {
  if (!isNum(x)) return "—";
  const digits = x !== 0 && Math.abs(x) < 1 ? 4 : 2;
  return new Intl.NumberFormat(undefined, {
    minimumFractionDigits: Math.min(2, digits),
    maximumFractionDigits: digits,
  }).format(x);
}

// One formatter for every time of day: toLocaleTimeString() builds a new
// one per call, which was the page's costliest work per refresh.
const clockFormat = new Intl.DateTimeFormat(undefined, {
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
});

/** The time of day of an ISO timestamp, to the second; "—" when unparseable. */
export function fmtClock(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "—";
  return clockFormat.format(d);
}

/** How long ago an ISO timestamp was, from `now` (ms): "just now", "40 s ago", "3 min ago". */
export function fmtAgo(iso: string, now: number = Date.now()): string {
  const t = new Date(iso).getTime();
  if (Number.isNaN(t)) return "";
  const sec = Math.max(0, (now - t) / 1000);
  if (sec < 5) return "just now";
  if (sec < 60) return `${Math.round(sec)} s ago`;
  return `${fmtDuration(sec).replace(/ \d+ s$/, "")} ago`;
}

/** A time offset on a chart's axis, in seconds before the latest sample: "now", "−40 s", "−3 min". */
export function fmtSecondsAgo(sec: number): string {
  const ago = Math.round(Math.abs(sec));
  if (ago === 0) return "now";
  if (ago < 120) return `−${ago} s`;
  return `−${Math.round(ago / 60)} min`;
}

/** An answer: "yes" and "no" for booleans, "—" when there is none. */
export function fmtAnswer(a: string | boolean | null | undefined): string {
  if (a === true) return "yes";
  if (a === false) return "no";
  if (a === null || a === undefined || a === "") return "—";
  return String(a);
}

/** A confidence as a percentage with one decimal. */
export function fmtConfidence(c: number | null | undefined): string {
  return isNum(c) ? fmtPct(c, 1) : "—";
}

/** A certified radius: the number of inserted words that could flip the answer, "∞" for null (none can). */
export function fmtRadius(r: number | null | undefined): string {
  if (r === null) return "∞";
  return isNum(r) ? String(r) : "—";
}

/** "1 request", "3 requests": `n` with its noun, plural unless 1. */
export function plural(n: number | null | undefined, noun: string): string {
  return `${fmtInt(n)} ${noun}${n === 1 ? "" : "s"}`;
}

/**
 * " · bundle 1a2b3c4d5e6f, reloaded at 12:03:04 (2 reloads)": the bundle's
 * id (its first 12 hex digits, as `versions`, `eval` and `serve` show it)
 * and, after `reloads` reloads, when it began serving; "" before stats say.
 */
export function reloadInWords(
  bundle: { id?: string; loaded_at?: string } | undefined,
  reloads: number,
): string {
  const id = bundle?.id ? ` · bundle ${bundle.id.slice(0, 12)}` : "";
  const at = bundle?.loaded_at;
  if (reloads === 0 || !at) return id;
  return `${id}, reloaded at ${fmtClock(at)} (${plural(reloads, "reload")})`;
}

/**
 * "threshold 87.3% · α 5.0%", or why the question is never certified; for
 * a question served with its second tier, the threshold in force named as
 * both tiers' and the table's own beside it: "threshold in force 95.2%
 * (both tiers) · table's own 97.2% · α 5.0%".
 */
export function calibrationInWords(q: QuestionSummary): string {
  const alpha = isNum(q.alpha) ? ` · α ${fmtPct(q.alpha, 1)}` : "";
  if (q.table_threshold !== undefined) {
    const own = isNum(q.table_threshold)
      ? `table's own ${fmtPct(q.table_threshold)}`
      : "uncalibrated for the table alone";
    return isNum(q.threshold)
      ? `threshold in force ${
        fmtPct(q.threshold)
      } (both tiers) · ${own}${alpha}`
      : `uncalibrated: never certified · ${own}`;
  }
  if (!isNum(q.threshold)) return "uncalibrated: never certified";
  return `threshold ${fmtPct(q.threshold)}${alpha}`;
}

/**
 * Labels for ticks at `splits` minutes since the start, never two alike:
 * whole minutes when the ticks are a minute apart or more, else minutes
 * and seconds.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { elapsedTicks } from "./format.ts";
 * assert.deepEqual(elapsedTicks([1, 1.5, 2, 2.5]), ["1:00", "1:30", "2:00", "2:30"]);
 * assert.deepEqual(elapsedTicks([0, 5, 10]), ["0 min", "5 min", "10 min"]);
 * ```
 */
export function elapsedTicks(splits: readonly number[]): string[] {
  const step = splits.length > 1
    ? Math.min(...splits.slice(1).map((s, i) => s - splits[i]!))
    : 1;
  if (step >= 1 && splits.every((s) => Math.abs(s - Math.round(s)) < 1e-6)) {
    return splits.map((s) => `${Math.round(s)} min`);
  }
  const clock = splits.map((s) => {
    const seconds = Math.round(s * 60);
    return `${Math.floor(seconds / 60)}:${
      String(seconds % 60).padStart(2, "0")
    }`;
  });
  // Ticks under a second apart: seconds with a decimal.
  return new Set(clock).size === clock.length
    ? clock
    : splits.map((s) => `${(s * 60).toFixed(1)} s`);
}
