/**
 * Text normalisation and word segmentation shared by training and serving.
 *
 * The same functions run on both sides, so a text is featurised identically
 * wherever it is seen.
 *
 * @module
 */

/**
 * Turns a request or trace `state` into the text the table reads: a string
 * stays as it is, anything else is serialised with `JSON.stringify`.
 */
export function stateText(state: unknown): string {
  return typeof state === "string" ? state : JSON.stringify(state) ?? "";
}

/** Unicode NFKC, then locale-independent lower case. */
export function normalizeText(text: string): string {
  return text.normalize("NFKC").toLowerCase();
}

/** The key two texts share when they must land in the same split. */
export function textKey(text: string): string {
  return normalizeText(text).replace(/\s+/gu, " ").trim();
}

const segmenter = new Intl.Segmenter("und", { granularity: "word" });

// deno-lint-ignore no-control-regex
const ASCII_ONLY = /^[\x00-\x7f]*$/;

/**
 * Splits a normalised text into its word-like segments, in order.
 *
 * Word boundaries are those of Unicode's UAX #29 (`Intl.Segmenter`). Pure
 * ASCII texts take a fast path that follows the same rules for ASCII (letters
 * and digits joined, `'` inside letters, `.` `,` `;` `'` inside
 * digits, `_` joining); a test checks both paths agree.
 */
export function segmentWords(text: string): string[] {
  if (ASCII_ONLY.test(text)) return asciiWords(text);
  const out: string[] = [];
  for (const s of segmenter.segment(text)) {
    if (s.isWordLike) out.push(s.segment);
  }
  return out;
}

/**
 * The words of a raw text: `segmentWords(normalizeText(text))`, with one
 * ASCII test (NFKC leaves ASCII unchanged, so ASCII text skips it).
 */
export function wordsOf(text: string): string[] {
  if (ASCII_ONLY.test(text)) return asciiWords(text.toLowerCase());
  return segmentWords(normalizeText(text));
}

const LETTER = 1;
const DIGIT = 2;
const JOIN = 3; // underscore (ExtendNumLet)

function classOf(c: number): number {
  if ((c >= 97 && c <= 122) || (c >= 65 && c <= 90)) return LETTER;
  if (c >= 48 && c <= 57) return DIGIT;
  if (c === 95) return JOIN;
  return 0;
}

// MidLetter or MidNumLet between letters: ' . :
function midLetter(c: number): boolean {
  return c === 39;
}
// MidNum or MidNumLet between digits: , ; . '
function midNum(c: number): boolean {
  return c === 44 || c === 59 || c === 46 || c === 39;
}

function asciiWords(text: string): string[] {
  const out: string[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const ci = classOf(text.charCodeAt(i));
    if (ci === 0) {
      i++;
      continue;
    }
    const start = i;
    let hasWordChar = ci !== JOIN;
    let prev = ci;
    i++;
    while (i < n) {
      const c = classOf(text.charCodeAt(i));
      if (c !== 0) {
        if (c !== JOIN) hasWordChar = true;
        prev = c;
        i++;
        continue;
      }
      // A single middle character joins two letters or two digits.
      if (i + 1 < n) {
        const mid = text.charCodeAt(i);
        const next = classOf(text.charCodeAt(i + 1));
        if (prev === LETTER && next === LETTER && midLetter(mid)) {
          i += 2;
          continue;
        }
        if (prev === DIGIT && next === DIGIT && midNum(mid)) {
          i += 2;
          continue;
        }
      }
      break;
    }
    if (hasWordChar || i - start >= 2) out.push(text.slice(start, i));
  }
  return out;
}
