/**
 * Shared helpers for the engine, trainer, bundle and command-line tests: a
 * seeded generator, synthetic traces with known structure, a small trained
 * table, temporary folders and a way to run the command line.
 *
 * @module
 */

import assert from "node:assert/strict";
import { encodeBundle } from "../src/bundle/codec.ts";
import { TableState } from "../src/engine/state.ts";
import type { Table } from "../src/engine/table.ts";
import type {
  Answer,
  ChoiceAnswer,
  YesNoAnswer,
} from "../src/engine/verdict.ts";
import { train } from "../src/train/trainer.ts";
import {
  DEFAULT_TRAIN_OPTIONS,
  type TrainOptions,
} from "../src/train/options.ts";
import { trainedContents, type TrainResult } from "../src/train/contents.ts";
import { parseJsonlTraces, type TraceSet } from "../src/traces/mod.ts";

const testStates = new WeakMap<Table, TableState>();

/**
 * The serving state the tests answer `table` with: one per table (made on
 * first use), as a server keeps one for the table it serves.
 */
export function stateOf(table: Table): TableState {
  let state = testStates.get(table);
  if (state === undefined) {
    state = new TableState(table);
    testStates.set(table, state);
  }
  return state;
}

/** A seeded generator of numbers in [0, 1) (mulberry32), independent of the code under test. */
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

/** A uniform integer in [0, n). */
export function randInt(random: () => number, n: number): number {
  return Math.floor(random() * n);
}

/** Shuffles `items` in place (Fisher-Yates with `random`); returns them. */
export function shuffled<T>(random: () => number, items: T[]): T[] {
  for (let j = items.length - 1; j > 0; j--) {
    const k = randInt(random, j + 1);
    [items[j], items[k]] = [items[k]!, items[j]!];
  }
  return items;
}

/** A uniformly chosen element. */
export function pick<T>(random: () => number, items: readonly T[]): T {
  return items[randInt(random, items.length)]!;
}

/** Distinctive words of each option of the synthetic `topic` question. */
export const TOPIC_WORDS: Record<string, string[]> = {
  billing: [
    "invoice",
    "charged",
    "payment",
    "bill",
    "overcharged",
    "receipt",
    "fee",
  ],
  shipping: [
    "parcel",
    "delivery",
    "courier",
    "tracking",
    "shipped",
    "arrive",
    "package",
  ],
  refund: [
    "refund",
    "money",
    "return",
    "reimburse",
    "cancelled",
    "back",
    "compensation",
  ],
  account: [
    "password",
    "login",
    "username",
    "profile",
    "locked",
    "email",
    "signin",
  ],
};

/** Options of the synthetic `topic` question. */
export const TOPICS: string[] = Object.keys(TOPIC_WORDS);

/** Words that say nothing about the topic. */
export const FILLER_WORDS: string[] = [
  "i",
  "my",
  "the",
  "a",
  "please",
  "help",
  "with",
  "is",
  "it",
  "can",
  "you",
  "me",
  "today",
  "again",
  "need",
  "this",
  "was",
  "for",
  "hello",
  "thanks",
  "there",
  "an",
  "still",
  "not",
  "yet",
  "why",
  "how",
  "what",
  "some",
  "issue",
];

/** Words that make the synthetic `urgent` yes/no question true. */
export const URGENT_WORDS: string[] = [
  "urgent",
  "immediately",
  "asap",
  "emergency",
];

/** One synthetic trace, as a JSON Lines object. */
export interface SyntheticTrace {
  text: string;
  answers: Record<string, string | boolean>;
}

/** What `syntheticTraces` makes. */
export interface SyntheticOptions {
  /** Number of traces. */
  count: number;
  seed: number;
  /** Share of `topic` answers replaced by a random option (the reference model's mistakes). */
  noise?: number;
  /** Share of traces that also answer `urgent` (the rest leave it out). */
  urgentShare?: number;
  /** Add a yes/no question `coin` answered at random (it cannot be certified). */
  coin?: boolean;
}

/**
 * Synthetic support messages: each mentions one to three distinctive words of
 * its topic among filler words, sometimes a word of another topic, and
 * sometimes an urgency word. `topic` is a choice among `TOPICS`; `urgent`
 * (yes/no) is answered by a share of the traces only.
 */
export function syntheticTraces(o: SyntheticOptions): SyntheticTrace[] {
  const random = rng(o.seed);
  const noise = o.noise ?? 0.03;
  const urgentShare = o.urgentShare ?? 0.8;
  const out: SyntheticTrace[] = [];
  for (let i = 0; i < o.count; i++) {
    const topic = pick(random, TOPICS);
    const words: string[] = [];
    const own = 1 + randInt(random, 3);
    for (let j = 0; j < own; j++) words.push(pick(random, TOPIC_WORDS[topic]!));
    if (random() < 0.25) {
      words.push(pick(random, TOPIC_WORDS[pick(random, TOPICS)]!));
    }
    const urgent = random() < 0.3;
    if (urgent) words.push(pick(random, URGENT_WORDS));
    const fillers = 2 + randInt(random, 5);
    for (let j = 0; j < fillers; j++) words.push(pick(random, FILLER_WORDS));
    shuffled(random, words);
    const label = random() < noise ? pick(random, TOPICS) : topic;
    const answers: Record<string, string | boolean> = { topic: label };
    if (random() < urgentShare) answers.urgent = urgent;
    if (o.coin) answers.coin = random() < 0.5;
    out.push({ text: words.join(" ") + (i % 7 === 0 ? "?" : "."), answers });
  }
  return out;
}

/** Traces as JSON Lines text. */
export function toJsonl(traces: readonly SyntheticTrace[]): string {
  return traces.map((t) => JSON.stringify(t)).join("\n") + "\n";
}

/** Parsed synthetic traces. */
export function syntheticTraceSet(o: SyntheticOptions): TraceSet {
  return parseJsonlTraces("synthetic.jsonl", toJsonl(syntheticTraces(o)));
}

/**
 * Training options for small synthetic data: fast and quiet. The
 * out-of-scope rule is off here, so that the tests of the other rules can
 * use texts such as one word of every topic (whose evidence cancels out and
 * would look out of scope); `SCOPED` turns it back on, and the rule's own
 * tests use it.
 */
export function smallTrainOptions(
  extra: Partial<TrainOptions> = {},
): TrainOptions {
  return {
    ...DEFAULT_TRAIN_OPTIONS,
    featurizer: { ...DEFAULT_TRAIN_OPTIONS.featurizer, buckets_log2: 18 },
    settings: {
      ...DEFAULT_TRAIN_OPTIONS.settings,
      drift: { ...DEFAULT_TRAIN_OPTIONS.settings.drift, scope_p: 0 },
    },
    maxEpochs: 8,
    ...extra,
  };
}

/** Training options with the out-of-scope rule at its default level. */
export const SCOPED: Partial<TrainOptions> = {
  settings: DEFAULT_TRAIN_OPTIONS.settings,
};

const trained = new Map<string, TrainResult>();

/**
 * A table trained on 1,500 synthetic traces (`topic`, `urgent`, and the
 * uncertifiable `coin`), cached per settings so that test files share it.
 */
export function smallTable(extra: Partial<TrainOptions> = {}): TrainResult {
  const key = JSON.stringify(extra);
  let r = trained.get(key);
  if (r === undefined) {
    r = train(
      syntheticTraceSet({ count: 2000, seed: 7, coin: true, noise: 0.005 }),
      smallTrainOptions(extra),
    );
    trained.set(key, r);
  }
  return r;
}

/** The bundle files of a training result. */
export function bundleFiles(r: TrainResult): Promise<Map<string, Uint8Array>> {
  return encodeBundle(trainedContents(r));
}

/** A fresh temporary folder, removed by the returned disposer. */
export async function tempDir(): Promise<
  { path: string; [Symbol.asyncDispose](): Promise<void> }
> {
  const path = await Deno.makeTempDir({ prefix: "dtable-test-" });
  return {
    path,
    async [Symbol.asyncDispose]() {
      await Deno.remove(path, { recursive: true }).catch(() => {});
    },
  };
}

/** What a run of the command line printed and returned. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const ROOT = new URL("..", import.meta.url).pathname;

/** Runs `deno run -A main.ts ARGS` in a subprocess, typed in `cwd` (its `INIT_CWD`, as under `deno task`). */
export async function runCli(
  args: string[],
  cwd: string = ROOT,
): Promise<CliRun> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", MAIN, ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", INIT_CWD: cwd },
  }).output();
  const dec = new TextDecoder();
  return {
    code: out.code,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
  };
}

/** Whether a path exists. */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

/** The shared real data folder, when this machine has it. */
export const SHARED_DATA = "/work/shared/data";

/** Asserts that `fn` throws an instance of `type` whose one-line message matches `pattern`. */
export function throwsWith(
  fn: () => unknown,
  type: abstract new (...args: never[]) => Error,
  pattern: RegExp,
): void {
  let thrown: unknown;
  try {
    fn();
  } catch (e) {
    thrown = e;
  }
  checkError(thrown, type, pattern);
}

/** Like `throwsWith`, for a promise. */
export async function rejectsWith(
  p: Promise<unknown>,
  type: abstract new (...args: never[]) => Error,
  pattern: RegExp,
): Promise<Error> {
  let thrown: unknown;
  try {
    await p;
  } catch (e) {
    thrown = e;
  }
  return checkError(thrown, type, pattern);
}

function checkError(
  thrown: unknown,
  type: abstract new (...args: never[]) => Error,
  pattern: RegExp,
): Error {
  if (thrown === undefined) {
    throw new Error(
      `expected a ${type.name} matching ${pattern}, nothing was thrown`,
    );
  }
  if (!(thrown instanceof type)) {
    throw new Error(`expected a ${type.name}, got ${String(thrown)}`);
  }
  if (!pattern.test(thrown.message)) {
    throw new Error(
      `message ${JSON.stringify(thrown.message)} does not match ${pattern}`,
    );
  }
  if (thrown.message.includes("\n")) {
    throw new Error(
      `message is not one line: ${JSON.stringify(thrown.message)}`,
    );
  }
  return thrown;
}

/** `answer` as a choice answer; fails the test when it is of another kind. */
export function choiceAnswer(answer: Answer): ChoiceAnswer {
  if (answer.kind !== "choice") {
    throw new assert.AssertionError({
      message: `expected a choice answer, got ${answer.kind}`,
    });
  }
  return answer;
}

/** `answer` as a yes/no answer; fails the test when it is of another kind. */
export function yesNoAnswer(answer: Answer): YesNoAnswer {
  if (answer.kind !== "yes_no") {
    throw new assert.AssertionError({
      message: `expected a yes/no answer, got ${answer.kind}`,
    });
  }
  return answer;
}

/** Names of the variables that say how this machine reaches a package registry (certificates, proxies). */
const NETWORK_VARIABLES = [
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "DENO_CERT",
  "DENO_TLS_CA_STORE",
  "HTTPS_PROXY",
  "https_proxy",
  "HTTP_PROXY",
  "http_proxy",
  "NO_PROXY",
  "no_proxy",
  "NPM_CONFIG_REGISTRY",
];

/**
 * The variables of this process that a child with a clean environment
 * needs to reach the npm registry as this process does (certificates,
 * proxies), and `DENO_DIR` when set.
 */
export function networkEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of [...NETWORK_VARIABLES, "DENO_DIR"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) out[name] = value;
  }
  return out;
}
