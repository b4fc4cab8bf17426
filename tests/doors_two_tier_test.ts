/**
 * One answer, whatever the door: the same texts sent to a bundle with a
 * second tier through `/v1/decide`, `/v1/decide/batch`, `/v1/decisions`,
 * `/v1/altdecisions`, `/v1/playground`, `predict` and `eval` come back with
 * the same answer, the same verdict and (where a door says it) the same
 * tier. The bundle is `_two_tier.ts`'s: its second tier answers every text
 * it is asked about with the same option, so which tier answers is the
 * table's call, and the second tier's answer is known.
 */

import assert from "node:assert/strict";
import { writeBundleAtomically } from "../src/bundle/files.ts";
import { bundleFiles, runCli, tempDir } from "./_fixtures.ts";
import { getText, postJson, startServer } from "./_http_helpers.ts";
import { favouriteOf, tierTextLists, twoTierResult } from "./_two_tier.ts";

const ENCODER_SOURCE = new URL("../src/encoder", import.meta.url).pathname;
const MAIN = new URL("../main.ts", import.meta.url).pathname;

type Json = Record<string, unknown>;

/** One door's word on one text: the answer, certified, and the tier when the door says it. */
interface Said {
  answer: unknown;
  certified: boolean;
  tier?: string;
}

/** The two-tier bundle, its drift alarm made rare (the same texts go through every door). */
async function writeBundle(dir: string): Promise<string> {
  const r = twoTierResult();
  const table = {
    ...r.table,
    settings: {
      ...r.table.settings,
      drift: { ...r.table.settings.drift, delta: 1e-12 },
    },
  };
  await writeBundleAtomically(dir, await bundleFiles({ ...r, table }));
  return dir;
}

async function semanticAsked(base: string): Promise<number> {
  const s = (await getText(base, "/v1/stats")).text;
  return ((JSON.parse(s).tiers as Json).semantic as Json).asked as number;
}

async function predict(bundle: string, input: string): Promise<string> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", MAIN, "predict", "--bundle", bundle],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(input));
  await writer.close();
  const out = await child.output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  assert.match(stderr, /loading the sentence encoder/);
  return new TextDecoder().decode(out.stdout);
}

Deno.test("every door of a two-tier bundle gives each text the answer, verdict and tier /v1/decide gives", async () => {
  await using tmp = await tempDir();
  const bundle = await writeBundle(`${tmp.path}/b`);
  const { certified, low } = tierTextLists(2, 3);
  const texts = [...certified, ...low];
  const favourite = favouriteOf(twoTierResult().table);
  const server = await startServer({ bundle, read: [ENCODER_SOURCE] });
  const doors = new Map<string, Said[]>();
  try {
    const decide: Said[] = [];
    for (const text of texts) {
      const r = await postJson(server.base, "/v1/decide", { state: text });
      assert.equal(r.status, 200);
      const t = (r.json.answers as Record<string, Json>).topic!;
      decide.push({
        answer: t.choice,
        certified: t.certified as boolean,
        tier: t.tier as string,
      });
    }
    doors.set("/v1/decide", decide);
    // The table certifies the first texts, the second tier the others.
    assert.deepEqual(decide.map((d) => d.tier), [
      ...certified.map(() => "table"),
      ...low.map(() => "semantic"),
    ]);
    for (const d of decide.slice(certified.length)) {
      assert.equal(d.answer, favourite);
      assert.equal(d.certified, true);
    }

    const askedBefore = await semanticAsked(server.base);
    const batch = await postJson(server.base, "/v1/decide/batch", {
      items: texts.map((state) => ({ state })),
    });
    assert.equal(batch.status, 200);
    doors.set(
      "/v1/decide/batch",
      (batch.json.items as Json[]).map((item) => {
        const t = (item.answers as Record<string, Json>).topic!;
        return {
          answer: t.choice,
          certified: t.certified as boolean,
          tier: t.tier as string,
        };
      }),
    );

    assert.equal(
      await semanticAsked(server.base),
      askedBefore + low.length,
      "the batch's low-confidence items went to the second tier, counted",
    );

    const decisions: Said[] = [];
    const alt: Said[] = [];
    const playground: Said[] = [];
    for (const text of texts) {
      const d = await postJson(server.base, "/v1/decisions", {
        input: text,
        questions: [{ type: "choice", name: "topic" }],
      });
      const a = (d.json.answers as Json[])[0]!;
      const s = a.service as Json;
      decisions.push({
        answer: a.choice,
        certified: s.certified as boolean,
        tier: s.source as string,
      });
      const r = await postJson(server.base, "/v1/altdecisions", {
        state: text,
        questions: { topic: { type: "choice" } },
      });
      const b = (r.json.answers as Record<string, Json>).topic!;
      const bs = b.service as Json;
      alt.push({
        answer: b.choice,
        certified: bs.certified as boolean,
        tier: bs.source as string,
      });
      const p = await postJson(server.base, "/v1/playground", {
        question: "topic",
        text,
      });
      assert.equal(p.status, 200);
      playground.push({
        answer: p.json.answer,
        certified: p.json.certified as boolean,
        tier: p.json.tier as string,
      });
      const reason = p.json.reason as string;
      const threshold = `${((p.json.threshold as number) * 100).toFixed(1)}%`;
      assert.ok(reason.includes(threshold), reason);
      assert.match(
        reason,
        p.json.tier === "semantic"
          ? /^Certified by the second tier .*the two-tier rule's/
          : /^Certified by the table: .*the two-tier rule's/,
      );
    }
    doors.set("/v1/decisions", decisions);
    doors.set("/v1/altdecisions", alt);
    doors.set("/v1/playground", playground);
  } finally {
    await server.stop();
  }

  const predicted = (await predict(bundle, texts.join("\n") + "\n"))
    .trimEnd().split("\n").map((line) => JSON.parse(line));
  doors.set(
    "predict",
    predicted.map((p) => {
      const t = p.answers.topic;
      return { answer: t.choice, certified: t.certified, tier: t.tier };
    }),
  );

  const traces = `${tmp.path}/traces.jsonl`;
  await Deno.writeTextFile(
    traces,
    texts.map((text) =>
      JSON.stringify({ text, answers: { topic: favourite } }) + "\n"
    ).join(""),
  );
  const predictions = `${tmp.path}/predictions.jsonl`;
  const run = await runCli([
    "eval",
    "--bundle",
    bundle,
    "--traces",
    traces,
    "--predictions",
    predictions,
  ]);
  assert.equal(run.code, 0, run.stderr);
  doors.set(
    "eval",
    (await Deno.readTextFile(predictions)).trimEnd().split("\n").map(
      (line) => {
        const t = JSON.parse(line).answers.topic;
        return { answer: t.answer, certified: t.certified };
      },
    ),
  );

  const reference = doors.get("/v1/decide")!;
  for (const [door, said] of doors) {
    assert.equal(said.length, texts.length, door);
    said.forEach((s, i) => {
      const want = reference[i]!;
      assert.equal(s.answer, want.answer, `${door}, "${texts[i]}"`);
      assert.equal(s.certified, want.certified, `${door}, "${texts[i]}"`);
      if (s.tier !== undefined) {
        assert.equal(s.tier, want.tier, `${door}, "${texts[i]}"`);
      }
    });
  }
});
