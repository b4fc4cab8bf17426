/**
 * Proxies built from the public data in `../shared/data` for the traffic a
 * first bundle meets and its traces do not show: texts written apart from
 * the traces, requests for none of the options, and logs whose options
 * arrive in bursts. The benchmarks (`bench_scope.ts`, `bench_honest.ts`)
 * read them; nothing here is copied into the project.
 *
 * - **Paraphrase families**: each BANKING77 `train.csv` text with 0-3
 *   variants (a word replaced, dropped or added), the way one writer or
 *   template repeats itself.
 * - **Rewritten BANKING77**: each `train.csv` text three times, each time
 *   rewritten by a different process than its writer's (a word dropped,
 *   two swapped, a filler inserted, an order number appended: the scale
 *   data's perturbations). The copies of one text are paraphrases less
 *   alike than the split's clustering similarity, so they straddle the
 *   split as a log of one writer's messages does, and `test.csv` plays
 *   the traffic written apart.
 * - **Held-out options**: BANKING77 without some options (a random draw, or
 *   a topic family such as the top-ups); their `test.csv` texts ask for
 *   none of the options the table has.
 * - **Other writers**: NLU++ banking texts whose every intent BANKING77
 *   has no option for, and NLU++ hotel requests.
 * - **NLU++ general intents, banking to hotels**: the yes/no questions
 *   both domains share, trained on banking texts and judged on hotel ones.
 * - **Bursty time logs**: BANKING77 `train.csv` with times over five
 *   months, its options interleaved, arriving in blocks (a fifth of the
 *   options a month, then staying), or each asked in one month only.
 *
 * @module
 */

import { readTraces, type TraceSet } from "../src/traces/mod.ts";
import { seededRandom } from "../src/engine/mod.ts";
import { perturb } from "./scale_data.ts";

/** BANKING77's two files, its option names and NLU++'s ontology. */
export interface PublicData {
  bankTrain: TraceSet;
  bankTest: TraceSet;
  categories: string[];
  /** NLU++ intent name to its domains (`banking`, `hotels`, `general`). */
  intentDomains: Record<string, string[]>;
  /** NLU++ rows of each domain, with their fold. */
  nlu: Record<"banking" | "hotels", NluRow[]>;
}

/** One NLU++ example. */
export interface NluRow {
  text: string;
  intents: string[];
  fold: number;
}

/** Reads the data sets from `data` (the `../shared/data` folder, with a trailing slash). */
export async function readPublicData(data: string): Promise<PublicData> {
  const ontology = JSON.parse(
    await Deno.readTextFile(`${data}nlupp/ontology.json`),
  ).intents as Record<string, { domain: string[] }>;
  const nlu = { banking: [] as NluRow[], hotels: [] as NluRow[] };
  for (const domain of ["banking", "hotels"] as const) {
    for (let fold = 0; fold < 20; fold++) {
      const rows = JSON.parse(
        await Deno.readTextFile(`${data}nlupp/${domain}/fold${fold}.json`),
      ) as { text: string; intents?: string[] }[];
      for (const r of rows) {
        nlu[domain].push({ text: r.text, intents: r.intents ?? [], fold });
      }
    }
  }
  return {
    bankTrain: await readTraces([`${data}banking77/train.csv`]),
    bankTest: await readTraces([`${data}banking77/test.csv`]),
    categories: JSON.parse(
      await Deno.readTextFile(`${data}banking77/categories.json`),
    ),
    intentDomains: Object.fromEntries(
      Object.entries(ontology).map(([k, v]) => [k, v.domain]),
    ),
    nlu,
  };
}

/** A one-question trace set from texts and option indices. */
function choiceSet(
  name: string,
  options: string[],
  texts: string[],
  labels: number[],
  times: Float64Array | null = null,
): TraceSet {
  return {
    texts,
    questions: [{
      name,
      kind: "choice",
      options,
      labels: Int32Array.from(labels),
    }],
    times,
    groups: null,
    groupNames: [],
  };
}

/** Each text of `t`'s first question `copies` times, rewritten (see the module doc). */
export function rewritten(t: TraceSet, copies = 3, seed = 5): TraceSet {
  const q = t.questions[0]!;
  const random = seededRandom(seed);
  const texts: string[] = [];
  const labels: number[] = [];
  t.texts.forEach((text, i) => {
    for (let c = 0; c < copies; c++) {
      texts.push(perturb(text, random));
      labels.push(q.labels[i]!);
    }
  });
  return choiceSet(q.name, q.options, texts, labels);
}

/** The traces of `t` answering one of `keep`, and the texts of the others. */
export function keepOptions(
  t: TraceSet,
  keep: ReadonlySet<string>,
): { kept: TraceSet; others: string[] } {
  const q = t.questions[0]!;
  const options = q.options.filter((o) => keep.has(o));
  const texts: string[] = [];
  const labels: number[] = [];
  const others: string[] = [];
  t.texts.forEach((text, i) => {
    const o = q.options[q.labels[i]!]!;
    if (keep.has(o)) {
      texts.push(text);
      labels.push(options.indexOf(o));
    } else others.push(text);
  });
  return { kept: choiceSet(q.name, options, texts, labels), others };
}

/** `count` BANKING77 options drawn at random with `seed`. */
export function drawOptions(
  categories: readonly string[],
  count: number,
  seed: number,
): Set<string> {
  const random = seededRandom(seed * 101);
  const order = [...categories];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return new Set(order.slice(0, count));
}

/** BANKING77's top-up options: a topic family. */
export function topUpOptions(categories: readonly string[]): Set<string> {
  return new Set(categories.filter((c) => /top_?up|topping/.test(c)));
}

/** NLU++ intents BANKING77 has no option for (greetings, yes/no, loans, ...). */
const NOT_IN_BANKING77 = new Set([
  "affirm",
  "deny",
  "dont_know",
  "acknowledge",
  "greet",
  "end_call",
  "handoff",
  "thank",
  "repeat",
  "appointment",
  "loan",
  "mortgage",
  "overdraft",
  "savings",
  "business",
  "cheque",
]);

/** NLU++ banking texts whose every intent BANKING77 has no option for. */
export function nluWithoutOption(d: PublicData): string[] {
  return d.nlu.banking.filter((r) =>
    r.intents.length > 0 && r.intents.every((i) => NOT_IN_BANKING77.has(i))
  ).map((r) => r.text);
}

/** NLU++ hotel requests, all of them. */
export function nluHotels(d: PublicData): string[] {
  return d.nlu.hotels.map((r) => r.text);
}

/** NLU++ rows as one yes/no question per intent of `intents`. */
export function nluYesNo(rows: readonly NluRow[], intents: string[]): TraceSet {
  return {
    texts: rows.map((r) => r.text),
    questions: intents.map((name) => ({
      name,
      kind: "yes_no" as const,
      options: ["true", "false"],
      labels: Int32Array.from(rows, (r) => r.intents.includes(name) ? 0 : 1),
    })),
    times: null,
    groups: null,
    groupNames: [],
  };
}

/** The NLU++ intents of the given domains (`general` for those both share). */
export function intentsOf(d: PublicData, ...domains: string[]): string[] {
  return Object.entries(d.intentDomains).filter(([, ds]) =>
    ds.some((x) => domains.includes(x))
  ).map(([k]) => k);
}

/** How the options of a bursty log arrive (see the module doc). */
export type Arrival = "interleaved" | "blocks" | "months";

/** BANKING77 `train.csv` with times over five months, options arriving as `arrival` says. */
export function timedLog(t: TraceSet, arrival: Arrival, seed = 11): TraceSet {
  const q = t.questions[0]!;
  const random = seededRandom(seed);
  const month = 30 * 86_400;
  const start = 1.7e9;
  const monthOf = q.options.map(() => Math.floor(random() * 5));
  const times = Float64Array.from(t.texts, (_, i) => {
    if (arrival === "interleaved") return start + random() * 5 * month;
    const m = monthOf[q.labels[i]!]!;
    return arrival === "months"
      ? start + (m + random()) * month
      : start + (m + random() * (5 - m)) * month;
  });
  return { ...t, times };
}

/** BANKING77 train texts, each with 0-3 variants: a word replaced, dropped or added. */
export function paraphraseFamilies(t: TraceSet): TraceSet {
  const random = seededRandom(77);
  const q = t.questions[0]!;
  const vocabulary = [...new Set(t.texts.join(" ").toLowerCase().split(/\s+/))];
  const fillers = [
    "please",
    "hi",
    "hello",
    "thanks",
    "so",
    "just",
    "really",
    "now",
  ];
  const texts: string[] = [];
  const labels: number[] = [];
  t.texts.forEach((text, i) => {
    const family = 1 + Math.floor(random() * 4);
    for (let v = 0; v < family; v++) {
      const words = text.split(/\s+/);
      const edits = v === 0 ? 0 : 1 + Math.floor(random() * 2);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(random() * words.length);
        const r = random();
        if (r < 0.4) {
          words[at] = vocabulary[Math.floor(random() * vocabulary.length)]!;
        } else if (r < 0.7 && words.length > 3) words.splice(at, 1);
        else {words.splice(
            at,
            0,
            fillers[Math.floor(random() * fillers.length)]!,
          );}
      }
      texts.push(words.join(" "));
      labels.push(q.labels[i]!);
    }
  });
  return {
    texts,
    questions: [{ ...q, labels: Int32Array.from(labels) }],
    times: null,
    groups: null,
    groupNames: [],
  };
}
