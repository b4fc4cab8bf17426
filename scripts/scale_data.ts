/**
 * Scale data for `bench-train.ts`: trace files of any length built from
 * BANKING77 texts, with word-level perturbations so that lines are (almost
 * always) distinct texts, and a second, yes/no question.
 *
 * Each line takes a BANKING77 training text in turn and applies one to three
 * perturbations: drop a word, swap two neighbouring words, insert a filler
 * word, or append an order number. Its answers are `category` (the BANKING77
 * intent, or with `markers > 1` the intent joined with a channel marker the
 * text mentions, to make 150 or 500 options from the same texts) and
 * `about_card` (whether the intent is about a card).
 *
 * @module
 */

import { parse as parseCsv } from "csv-parse/sync";
import { seededRandom } from "../src/engine/mod.ts";

/** Words inserted at random places. */
const FILLERS = [
  "please",
  "hi",
  "hello",
  "thanks",
  "now",
  "again",
  "today",
  "kindly",
  "actually",
  "just",
  "really",
  "urgently",
  "so",
  "ok",
];

/** Channel markers: with `markers` M > 1, option = intent + one of M markers. */
const MARKERS = [
  "app",
  "email",
  "phone",
  "chat",
  "branch",
  "website",
  "letter",
  "twitter",
  "fax",
  "kiosk",
];

/** What a scale file is made of. */
export interface ScaleOptions {
  lines: number;
  seed: number;
  /** Intents used (at most 77); options = intents × markers. */
  intents: number;
  /** Channel markers per intent (1: plain BANKING77 labels). */
  markers: number;
  /** Also answer the yes/no question `about_card`. */
  yesNo: boolean;
  /** Write each line's source text as its `group` (`source N`), for `train` to split by. */
  groups?: boolean;
}

/** BANKING77 rows (text, category) from a CSV file's contents. */
export function banking77Rows(csv: string): { text: string; label: string }[] {
  const records: string[][] = parseCsv(csv, { from_line: 2 });
  return records.map((r) => ({ text: r[0]!, label: r[1]! }));
}

/** Perturbs a text's words (see the module doc). */
export function perturb(text: string, random: () => number): string {
  const words = text.split(/\s+/).filter((w) => w !== "");
  const ops = 1 + Math.floor(random() * 3);
  for (let o = 0; o < ops; o++) {
    const at = Math.floor(random() * words.length);
    const kind = random();
    if (kind < 0.3 && words.length > 3) words.splice(at, 1);
    else if (kind < 0.55 && at + 1 < words.length) {
      [words[at], words[at + 1]] = [words[at + 1]!, words[at]!];
    } else if (kind < 0.85) {
      words.splice(at, 0, FILLERS[Math.floor(random() * FILLERS.length)]!);
    } else words.push(`#${1 + Math.floor(random() * 9999)}`);
  }
  return words.join(" ");
}

/**
 * Writes `options.lines` JSON Lines traces to `path`, in chunks; returns
 * the number of options of `category` and of source texts (line `i` is a
 * variant of source text `i % sources`).
 */
export async function writeScaleTraces(
  path: string,
  rows: readonly { text: string; label: string }[],
  options: ScaleOptions,
): Promise<{ options: number; sources: number }> {
  const intents = [...new Set(rows.map((r) => r.label))].slice(
    0,
    options.intents,
  );
  const keep = new Set(intents);
  const source = rows.filter((r) => keep.has(r.label));
  const random = seededRandom(options.seed);
  const file = await Deno.open(path, {
    write: true,
    create: true,
    truncate: true,
  });
  const encoder = new TextEncoder();
  try {
    let chunk: string[] = [];
    for (let i = 0; i < options.lines; i++) {
      const row = source[i % source.length]!;
      let text = perturb(row.text, random);
      let category = row.label;
      if (options.markers > 1) {
        const m = MARKERS[Math.floor(random() * options.markers)]!;
        text = `${text} via ${m}`;
        category = `${category}:${m}`;
      }
      const answers: Record<string, string | boolean> = { category };
      if (options.yesNo) answers.about_card = row.label.includes("card");
      chunk.push(
        JSON.stringify(
          options.groups
            ? { text, answers, group: `source ${i % source.length}` }
            : { text, answers },
        ),
      );
      if (chunk.length === 10_000 || i === options.lines - 1) {
        await writeAll(file, encoder.encode(chunk.join("\n") + "\n"));
        chunk = [];
      }
    }
  } finally {
    file.close();
  }
  return {
    options: intents.length * Math.max(1, options.markers),
    sources: source.length,
  };
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let at = 0;
  while (at < bytes.length) at += await file.write(bytes.subarray(at));
}
