/**
 * Numbers as JSON text, fast: exact (the shortest text that reads back as
 * the same double, as `JSON.stringify` prints it) or, for the probabilities
 * of a choice answer, to `PROBABILITY_DIGITS` significant digits.
 *
 * Rounding to a fixed number of significant digits is monotone: a larger
 * probability never prints smaller than a smaller one, so the printed
 * order of options never contradicts the answer. Where a rival would print
 * the same as the answer, the reply writers print both exactly.
 *
 * @module
 */

/** Significant digits of the probabilities in a choice answer's `probabilities`. */
export const PROBABILITY_DIGITS = 6;

/** A number as JSON prints it (`null` for NaN and infinities, as `JSON.stringify` does). */
export function exactNumber(x: number): string {
  return Number.isFinite(x) ? String(x) : "null";
}

const NEG10: number[] = [];
const POW10: number[] = [];
for (let i = 0; i <= 24; i++) {
  NEG10.push(10 ** -i);
  POW10.push(10 ** i);
}
const TOP = 10 ** PROBABILITY_DIGITS;
/** Decades below 1 printed in plain decimals (`0.000001`); smaller ones in exponent form. */
const PLAIN_DECADES = 6;
/** Below this, a probability is printed exactly (the digit arithmetic would lose precision). */
const SMALLEST_ROUNDED = 1e-17;

/** The bits of a double, to read its binary exponent. */
const bits = new Float64Array(1);
const bitsHigh = new Uint32Array(bits.buffer, 4, 1);
/**
 * For a binary exponent `b` (0 down to -60, at `-b`): the decade of 2^b,
 * the smallest `e` with 10^-e <= 2^b. A number in [2^b, 2^(b+1)) has that
 * decade or the one above, since a doubling spans less than one decade.
 */
const DECADE_OF_OCTAVE = new Int32Array(61);
for (let b = 0; b <= 60; b++) {
  let e = 0;
  while (2 ** -b < NEG10[e]!) e++;
  DECADE_OF_OCTAVE[b] = e;
}
/** `PAIRS[2n]`, `PAIRS[2n + 1]`: the two ASCII digits of n in [0, 100). */
const PAIRS = new Uint8Array(200);
for (let n = 0; n < 100; n++) {
  PAIRS[2 * n] = 48 + Math.floor(n / 10);
  PAIRS[2 * n + 1] = 48 + (n % 10);
}

/** `probabilityKey` of a probability printed exactly. */
export const EXACT_KEY = -1;
/** `probabilityKey` of 0. */
const ZERO_KEY = -2;
/** `probabilityKey` of 1 (and of anything that rounds to it). */
const ONE_KEY = 0;

/**
 * A number that identifies how `p` prints: two probabilities print the
 * same exactly when their keys are equal (and not `EXACT_KEY`). For `p` in
 * [1e-17, 1), the key is `decade * 10^6 + mantissa`: `p` rounds to
 * `mantissa × 10^-(decade + 5)` with a 6-digit mantissa.
 */
export function probabilityKey(p: number): number {
  if (p === 0) return ZERO_KEY;
  if (!(p >= SMALLEST_ROUNDED && p <= 1)) return EXACT_KEY;
  // The decade e (10^-e <= p < 10^-(e-1)) from the binary exponent.
  bits[0] = p;
  const octave = 1023 - ((bitsHigh[0]! >>> 20) & 0x7ff);
  let e = DECADE_OF_OCTAVE[octave]!;
  if (e > 0 && p >= NEG10[e - 1]!) e--;
  if (e === 0) return ONE_KEY;
  let m = Math.round(p * POW10[e + PROBABILITY_DIGITS - 1]!) | 0;
  if (m >= TOP) {
    // Rounded up into the next decade: 0.09999996 -> 0.100000.
    m = TOP / 10;
    e--;
  }
  return e <= 0 ? ONE_KEY : e * TOP + m;
}

/**
 * Writes the probability with key `key` (from `probabilityKey(p)`) as
 * ASCII into `buf` at `at`; returns the position after it. `buf` must have
 * room for 26 bytes.
 */
export function writeProbabilityKey(
  buf: Uint8Array,
  at: number,
  key: number,
  p: number,
): number {
  if (key <= ONE_KEY) {
    if (key === EXACT_KEY) return writeAscii(buf, at, exactNumber(p));
    buf[at] = key === ZERO_KEY ? 48 : 49; // 0 or 1
    return at + 1;
  }
  // The six digits of the mantissa, two at a time.
  const e = (key / TOP) | 0;
  const m = key - e * TOP;
  const high = (m / 10000) | 0;
  const rest = m - high * 10000;
  const middle = (rest / 100) | 0;
  const low = rest - middle * 100;
  if (e <= PLAIN_DECADES) {
    // 0.000dddddd, trailing zeros dropped.
    buf[at++] = 48;
    buf[at++] = 46;
    for (let z = 1; z < e; z++) buf[at++] = 48;
    buf[at] = PAIRS[2 * high]!;
    buf[at + 1] = PAIRS[2 * high + 1]!;
    buf[at + 2] = PAIRS[2 * middle]!;
    buf[at + 3] = PAIRS[2 * middle + 1]!;
    buf[at + 4] = PAIRS[2 * low]!;
    buf[at + 5] = PAIRS[2 * low + 1]!;
    let end = at + 6;
    while (buf[end - 1] === 48) end--;
    return end;
  }
  // d.ddddde-E, as JavaScript prints numbers below 1e-6.
  buf[at] = PAIRS[2 * high]!;
  buf[at + 1] = 46;
  buf[at + 2] = PAIRS[2 * high + 1]!;
  buf[at + 3] = PAIRS[2 * middle]!;
  buf[at + 4] = PAIRS[2 * middle + 1]!;
  buf[at + 5] = PAIRS[2 * low]!;
  buf[at + 6] = PAIRS[2 * low + 1]!;
  let end = at + 7;
  while (buf[end - 1] === 48) end--;
  if (end === at + 2) end = at + 1; // no fraction left: drop the point
  buf[end++] = 101; // e
  buf[end++] = 45; // -
  if (e >= 10) {
    buf[end++] = PAIRS[2 * e]!;
    buf[end++] = PAIRS[2 * e + 1]!;
  } else buf[end++] = 48 + e;
  return end;
}

/** Writes an ASCII string into `buf` at `at`; returns the position after it. */
export function writeAscii(buf: Uint8Array, at: number, s: string): number {
  for (let i = 0; i < s.length; i++) buf[at + i] = s.charCodeAt(i);
  return at + s.length;
}

/**
 * A probability in [0, 1] as JSON text with at most `PROBABILITY_DIGITS`
 * significant digits, trailing zeros dropped, in plain decimals down to
 * 1e-6 and in exponent form below (as JavaScript prints numbers). Values
 * below 1e-17 (other than 0) and outside [0, 1] are printed exactly.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { probabilityText } from "./json_number.ts";
 * assert.equal(probabilityText(0.9999498826587676), "0.99995");
 * assert.equal(probabilityText(8.789104062965426e-10), "8.7891e-10");
 * ```
 */
export function probabilityText(p: number): string {
  const buf = new Uint8Array(32);
  const end = writeProbabilityKey(buf, 0, probabilityKey(p), p);
  return String.fromCharCode(...buf.subarray(0, end));
}
