/**
 * `deno task check:doors`: whether every door of a bundle gives each text
 * the answer and verdict `/v1/decide` gives, on real texts and a real
 * bundle (the test suite checks the same on a small fixture whose second
 * tier is known). The texts are sent once per door, each door to a server
 * of its own (so that the drift guard sees each text once): `/v1/decide`,
 * `/v1/decide/batch` (in batches of up to 256), `/v1/decisions`,
 * `/v1/altdecisions`, `/v1/playground`, then `predict` and `eval`. Prints,
 * per door and question, how many texts agree with `/v1/decide` (answer,
 * verdict and, where the door says it, tier), and the first texts that do
 * not; exits 1 when any does not. Texts that trip the drift guard make
 * the doors differ by design: the decision doors and `predict` feed the
 * guard and then withhold, the playground reads it without feeding it and
 * `eval` judges each text alone.
 *
 * ```sh
 * deno task check:doors --bundle DIR [--texts FILE.csv] [--limit 300] [--seed 1]
 * ```
 *
 * Without `--texts`, BANKING77's `test.csv` in `../shared/data` (a seeded
 * sample of `--limit` texts).
 *
 * @module
 */

import { parseArgs } from "node:util";
import { loadBundle } from "../src/bundle/mod.ts";
import { readTraces } from "../src/traces/mod.ts";
import { DATA, exitWithoutData } from "./bench_data.ts";
import { startServe } from "./processes.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const ENCODER = new URL("../src/encoder", import.meta.url).pathname;

type Json = Record<string, unknown>;

/** One door's word on one text and question. */
interface Said {
  answer: unknown;
  certified: boolean;
  tier?: string;
  /** Why not certified (`/v1/decide`'s flag; not compared). */
  flag?: string;
}

const { values } = parseArgs({
  options: {
    bundle: { type: "string" },
    texts: { type: "string" },
    limit: { type: "string", default: "300" },
    seed: { type: "string", default: "1" },
  },
});
if (values.bundle === undefined) {
  console.error("check:doors: --bundle DIR is required");
  Deno.exit(2);
}
const bundlePath = values.bundle;
const textsFile = values.texts ?? `${DATA}banking77/test.csv`;
if (values.texts === undefined) await exitWithoutData();
const limit = Number(values.limit);
const table = await loadBundle(bundlePath);
const questions = table.questions.map((q) => q.name);
const texts = sample(
  (await readTraces([textsFile], { warn: () => {}, note: () => {} })).texts,
  limit,
  Number(values.seed),
);
console.log(
  `${texts.length} texts of ${textsFile}; bundle ${bundlePath} (${questions.length} question(s), ${
    table.questions.filter((q) => q.semantic !== undefined).length
  } with a second tier)`,
);

/** `n` texts of `all` in a seeded order (all of them when fewer). */
function sample(all: readonly string[], n: number, seed: number): string[] {
  const out = [...all];
  let s = seed >>> 0 || 1;
  for (let i = out.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out.slice(0, n);
}

async function post(base: string, path: string, body: unknown): Promise<Json> {
  const r = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = await r.json();
  if (r.status !== 200) {
    throw new Error(`${path}: ${r.status} ${JSON.stringify(json)}`);
  }
  return json;
}

/** Runs `ask` against a fresh server of the bundle; returns per text, per question, what it said. */
async function door(
  ask: (base: string) => Promise<Said[][]>,
): Promise<Said[][]> {
  const server = await startServe(bundlePath, [], {
    read: `${bundlePath},${ENCODER}`,
  });
  try {
    return await ask(server.base);
  } finally {
    await server.stop();
  }
}

const fromDecide = (answers: Record<string, Json>): Said[] =>
  questions.map((q) => {
    const a = answers[q]!;
    return {
      answer: a.choice ?? a.answer,
      certified: a.certified as boolean,
      tier: a.tier as string,
      ...(typeof a.flag === "string" ? { flag: a.flag } : {}),
    };
  });

/** A decision-model answer (`service` says the verdict and the tier). */
const fromModel = (a: Json): Said => {
  const s = a.service as Json;
  return {
    answer: a.choice ?? a.answer,
    certified: s.certified as boolean,
    tier: s.source as string,
  };
};

/** A door asked one text at a time. */
const eachText = (ask: (base: string, text: string) => Promise<Said[]>) =>
  door(async (base) => {
    const out: Said[][] = [];
    for (const text of texts) out.push(await ask(base, text));
    return out;
  });

const kindOf = (name: string) =>
  table.byName.get(name)!.kind === "yes_no" ? "yes_no" : "choice";
const doors = new Map<string, Said[][]>();
doors.set(
  "/v1/decide",
  await eachText(async (base, state) =>
    fromDecide(
      (await post(base, "/v1/decide", { state })).answers as Record<
        string,
        Json
      >,
    )
  ),
);
doors.set(
  "/v1/decide/batch",
  await door(async (base) => {
    const out: Said[][] = [];
    for (let i = 0; i < texts.length; i += 256) {
      const r = await post(base, "/v1/decide/batch", {
        items: texts.slice(i, i + 256).map((state) => ({ state })),
      });
      for (const item of r.items as Json[]) {
        out.push(fromDecide(item.answers as Record<string, Json>));
      }
    }
    return out;
  }),
);
doors.set(
  "/v1/decisions",
  await eachText(async (base, input) => {
    const r = await post(base, "/v1/decisions", {
      input,
      questions: questions.map((name) => ({ type: kindOf(name), name })),
    });
    return (r.answers as Json[]).map(fromModel);
  }),
);
doors.set(
  "/v1/altdecisions",
  await eachText(async (base, state) => {
    const r = await post(base, "/v1/altdecisions", {
      state,
      questions: Object.fromEntries(
        questions.map((name) => [name, { type: kindOf(name) }]),
      ),
    });
    const answers = r.answers as Record<string, Json>;
    return questions.map((q) => fromModel(answers[q]!));
  }),
);
doors.set(
  "/v1/playground",
  await eachText(async (base, text) => {
    const row: Said[] = [];
    for (const question of questions) {
      const p = await post(base, "/v1/playground", { question, text });
      row.push({
        answer: p.answer,
        certified: p.certified as boolean,
        tier: p.tier as string,
      });
    }
    return row;
  }),
);

await using tmp = {
  path: await Deno.makeTempDir({ prefix: "check-doors-" }),
  async [Symbol.asyncDispose]() {
    await Deno.remove(this.path, { recursive: true });
  },
};
const input = `${tmp.path}/texts.txt`;
await Deno.writeTextFile(
  input,
  texts.map((t) => t.replace(/[\r\n]+/g, " ")).join("\n") + "\n",
);
const predicted = await new Deno.Command(Deno.execPath(), {
  args: [
    "run",
    "-A",
    "--quiet",
    MAIN,
    "predict",
    "--bundle",
    bundlePath,
    input,
  ],
  stdout: "piped",
  stderr: "piped",
  env: { NO_COLOR: "1" },
}).output();
if (predicted.code !== 0) {
  throw new Error(`predict: ${new TextDecoder().decode(predicted.stderr)}`);
}
doors.set(
  "predict",
  new TextDecoder().decode(predicted.stdout).trimEnd().split("\n").map(
    (line) => {
      const answers = JSON.parse(line).answers as Record<string, Json>;
      return fromDecide(answers);
    },
  ),
);
// eval reads traces: each text with the answer /v1/decide gave (any label
// would do; the predictions file says what the bundle answered).
const reference = doors.get("/v1/decide")!;
const traces = `${tmp.path}/traces.jsonl`;
await Deno.writeTextFile(
  traces,
  texts.map((text, i) =>
    JSON.stringify({
      text,
      answers: Object.fromEntries(
        questions.map((q, j) => [q, reference[i]![j]!.answer]),
      ),
    }) + "\n"
  ).join(""),
);
const predictions = `${tmp.path}/predictions.jsonl`;
const evaluated = await new Deno.Command(Deno.execPath(), {
  args: [
    "run",
    "-A",
    "--quiet",
    MAIN,
    "eval",
    "--bundle",
    bundlePath,
    "--traces",
    traces,
    "--predictions",
    predictions,
  ],
  stdout: "piped",
  stderr: "piped",
  env: { NO_COLOR: "1" },
}).output();
if (evaluated.code !== 0) {
  throw new Error(`eval: ${new TextDecoder().decode(evaluated.stderr)}`);
}
doors.set(
  "eval",
  (await Deno.readTextFile(predictions)).trimEnd().split("\n").map((line) => {
    const answers = JSON.parse(line).answers as Record<string, Json>;
    return questions.map((q) => ({
      answer: answers[q]!.answer,
      certified: answers[q]!.certified as boolean,
    }));
  }),
);

let differ = 0;
const tiers = reference.flat().reduce<Record<string, number>>((m, s) => {
  const key = s.certified
    ? `certified (${s.tier})`
    : `not certified (${s.tier}, ${s.flag ?? "no flag"})`;
  m[key] = (m[key] ?? 0) + 1;
  return m;
}, {});
console.log(`/v1/decide: ${JSON.stringify(tiers)}`);
for (const [name, said] of doors) {
  const wrong: string[] = [];
  said.forEach((row, i) =>
    row.forEach((s, j) => {
      const want = reference[i]![j]!;
      const same = s.answer === want.answer && s.certified === want.certified &&
        (s.tier === undefined || s.tier === want.tier);
      if (!same) {
        wrong.push(
          `#${i} "${texts[i]}" ${questions[j]}: ${
            JSON.stringify({ ...s, flag: undefined })
          } against ${JSON.stringify(want)}`,
        );
      }
    })
  );
  if (said.length !== texts.length) {
    wrong.push(`answered ${said.length} of ${texts.length} texts`);
  }
  differ += wrong.length;
  console.log(
    `${name.padEnd(18)} ${said.length * questions.length - wrong.length} of ${
      said.length * questions.length
    } agree with /v1/decide`,
  );
  for (const w of wrong.slice(0, 5)) console.log(`  ${w}`);
}
Deno.exit(differ === 0 ? 0 : 1);
