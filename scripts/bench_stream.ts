/**
 * The learning benchmarks' stream (`bench:cold`, `bench:fleet-learn`):
 * BANKING77's training texts once, in a seeded order, with the texts of a
 * few seeded options held back until the second half, as a product
 * arriving.
 *
 * @module
 */

import type { TraceSet } from "../src/traces/mod.ts";

/** A seeded generator (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

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
  const random = rng(seed);
  const late = new Set(shuffle([...q.options], random).slice(0, held));
  const early = shuffle(items.filter((x) => !late.has(x.label)), random);
  const news = items.filter((x) => late.has(x.label));
  const half = Math.floor(items.length / 2);
  const first = early.slice(0, half);
  const second = shuffle([...early.slice(half), ...news], random);
  return [...first, ...second];
}
