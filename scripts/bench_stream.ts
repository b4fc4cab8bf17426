/**
 * The learning benchmarks' stream (`bench:cold`, `bench:fleet`):
 * BANKING77's training texts once, in a seeded order, with the texts of a
 * few seeded options held back until the second half, as a product
 * arriving.
 *
 * @module
 */

import { seededRandom } from "../src/engine/mod.ts";
import type { TraceSet } from "../src/traces/mod.ts";

/** Shuffles `items` in place with `random` (Fisher-Yates); returns them. */
export function shuffle<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

export interface Item {
  text: string;
  label: string;
}

/**
 * The stream: every training text once, in a seeded order, the texts of
 * `held` seeded options moved to random places in the second half.
 */
export function streamOf(train: TraceSet, held: number, seed: number): Item[] {
  const q = train.questions[0]!;
  const items = train.texts.map((text, i) => ({
    text,
    label: q.options[q.labels[i]!]!,
  }));
  const random = seededRandom(seed);
  const late = new Set(shuffle([...q.options], random).slice(0, held));
  const early = shuffle(items.filter((x) => !late.has(x.label)), random);
  const news = items.filter((x) => late.has(x.label));
  const half = Math.floor(items.length / 2);
  const first = early.slice(0, half);
  const second = shuffle([...early.slice(half), ...news], random);
  return [...first, ...second];
}

/** POSTs `body` as JSON to `base` + `path`; the reply's JSON, or throws naming the status. */
export async function post(
  base: string,
  path: string,
  body: unknown,
  // deno-lint-ignore no-explicit-any
): Promise<any> {
  const r = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = await r.json();
  if (!r.ok) throw new Error(`${path}: ${r.status} ${JSON.stringify(json)}`);
  return json;
}
