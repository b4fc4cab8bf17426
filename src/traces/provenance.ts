/**
 * Where a trace comes from: its `time` and its `group`.
 *
 * A time is ISO 8601 in extended format (`2024-05-01`, `2024-05-01T12:30Z`,
 * `2024-05-01 12:30:05.250+02:00`; `T` or a space between date and time) or
 * seconds since the epoch. A time without a zone offset is read as UTC, so
 * the machine's own zone never changes what training does. Each check returns
 * the reason a value was refused, or the seconds it stands for.
 *
 * @module
 */

/** Seconds since the epoch past which a number is taken for milliseconds (about year 5138). */
export const MAX_EPOCH_SECONDS = 1e11;

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?)?$/;

const DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

const EXAMPLE = "such as 2024-05-01T12:30:00Z";

/** The result of reading a time: seconds since the epoch, or why the value was refused. */
export type TimeReading = { seconds: number } | { reason: string };

/**
 * Reads a strict ISO 8601 time (extended format; a missing zone means UTC).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseIsoTime } from "./provenance.ts";
 * assert.deepEqual(parseIsoTime("2024-05-01T00:00:01Z"), { seconds: 1714521601 });
 * assert.match(String((parseIsoTime("May 1, 2024") as { reason: string }).reason), /ISO 8601/);
 * ```
 */
export function parseIsoTime(text: string): TimeReading {
  const m = ISO.exec(text);
  const refuse = (why: string): TimeReading => ({
    reason: `time ${JSON.stringify(text)} ${why}`,
  });
  if (m === null) {
    return refuse(
      `is not ISO 8601 (a date, time and zone ${EXAMPLE}) or seconds since the epoch`,
    );
  }
  const [, y, mo, d, h, mi, s, frac, , sign, oh, om] = m;
  const year = Number(y), month = Number(mo), day = Number(d);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (month < 1 || month > 12) return refuse("has no such month");
  if (
    day < 1 || day > DAYS[month - 1]! || (month === 2 && day === 29 && !leap)
  ) {
    return refuse("has no such day");
  }
  const hour = Number(h ?? 0),
    minute = Number(mi ?? 0),
    second = Number(s ?? 0);
  if (hour > 23 || minute > 59 || second > 60) {
    return refuse("has no such time of day");
  }
  const offsetHours = Number(oh ?? 0), offsetMinutes = Number(om ?? 0);
  if (offsetHours > 23 || offsetMinutes > 59) {
    return refuse("has no such zone offset");
  }
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  const offset = (sign === "-" ? -1 : 1) *
    (offsetHours * 3600 + offsetMinutes * 60);
  const fraction = frac === undefined ? 0 : Number(`0.${frac}`);
  return { seconds: date.getTime() / 1000 + fraction - offset };
}

/** Checks seconds since the epoch: finite, and not so large that they must be milliseconds. */
export function checkEpochSeconds(seconds: number, shown: string): TimeReading {
  if (!Number.isFinite(seconds)) {
    return { reason: `time ${shown} is not a finite number of seconds` };
  }
  if (Math.abs(seconds) >= MAX_EPOCH_SECONDS) {
    return {
      reason:
        `time ${shown} is too large for seconds since the epoch (milliseconds? divide by 1000)`,
    };
  }
  return { seconds };
}

const NUMERIC = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Reads a JSON `time`: a number is seconds since the epoch, a string ISO 8601; null or absent is NaN. */
export function jsonTime(value: unknown): TimeReading {
  if (value === undefined || value === null) return { seconds: NaN };
  if (typeof value === "number") return checkEpochSeconds(value, String(value));
  if (typeof value === "string") {
    const iso = parseIsoTime(value);
    if ("reason" in iso && NUMERIC.test(value.trim())) {
      return {
        reason: `time ${
          JSON.stringify(value)
        } is a string; seconds since the epoch must be a JSON number`,
      };
    }
    return iso;
  }
  return {
    reason:
      `"time" must be an ISO 8601 string or seconds since the epoch: got ${
        JSON.stringify(value)
      }`,
  };
}

/** Reads a CSV `time` cell: a number is seconds since the epoch, anything else ISO 8601; empty is NaN. */
export function cellTime(cell: string): TimeReading {
  if (cell === "") return { seconds: NaN };
  if (NUMERIC.test(cell)) return checkEpochSeconds(Number(cell), cell);
  return parseIsoTime(cell);
}

/** The result of reading a group: its name (undefined for none), or why the value was refused. */
export type GroupReading = { name: string | undefined } | { reason: string };

/** Reads a JSON `group`: a non-empty string, or an integer (named by its decimal digits); null or absent is none. */
export function jsonGroup(value: unknown): GroupReading {
  if (value === undefined || value === null) return { name: undefined };
  if (typeof value === "string") {
    return value === ""
      ? { reason: `"group" is an empty string` }
      : { name: value };
  }
  if (typeof value === "number" && Number.isSafeInteger(value)) {
    return { name: String(value) };
  }
  return {
    reason: `"group" must be a non-empty string or an integer: got ${
      JSON.stringify(value)
    }`,
  };
}
