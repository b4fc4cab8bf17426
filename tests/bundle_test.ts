import assert from "node:assert/strict";
import { loadBundle, writeBundleAtomically } from "../src/bundle/files.ts";
import {
  BUNDLE_FORMAT,
  BundleError,
  FORMAT_VERSION,
  MANIFEST_FILE,
  READABLE_VERSIONS,
  REPORT_FILE,
  sha256Hex,
  WEIGHTS_FILE,
} from "../src/bundle/codec.ts";
import { assess } from "../src/engine/answer.ts";
import { prepareText } from "../src/engine/prepare.ts";
import { QUIET_GUARD } from "../src/engine/drift.ts";
import type { QuestionTable } from "../src/engine/table.ts";
import { newCertificate } from "../src/live/_new_certificate.ts";
import { DEFAULT_TRAIN_OPTIONS } from "../src/train/options.ts";
import { type TrainResult } from "../src/train/contents.ts";
import {
  bundleFiles,
  exists,
  rejectsWith,
  runCli,
  SCOPED,
  smallTable,
  stateOf,
  syntheticTraces,
  tempDir,
  toJsonl,
} from "./_fixtures.ts";

/** A format version no program reads yet. */
const FUTURE_VERSION = Math.max(...READABLE_VERSIONS) + 1;

/** Entries of a folder, sorted. */
async function list(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) out.push(e.name);
  return out.sort();
}

async function writeFiles(
  dir: string,
  files: Map<string, Uint8Array>,
): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  for (const [name, bytes] of files) {
    await Deno.writeFile(`${dir}/${name}`, bytes);
  }
}

Deno.test("loadBundle() reads back a written bundle that answers exactly like the trained table", async () => {
  await using tmp = await tempDir();
  const r = smallTable();
  const dir = `${tmp.path}/bundle`;
  await writeBundleAtomically(dir, await bundleFiles(r));
  assert.deepEqual(
    await list(dir),
    [MANIFEST_FILE, REPORT_FILE, WEIGHTS_FILE].sort(),
  );
  const loaded = await loadBundle(dir);
  assert.deepEqual(loaded.questions.map((q) => q.name), [
    "topic",
    "urgent",
    "coin",
  ]);
  assert.deepEqual(loaded.featurizer, r.table.featurizer);
  assert.deepEqual(loaded.settings, r.table.settings);
  const texts = [
    ...syntheticTraces({ count: 60, seed: 909 }).map((t) => t.text),
    "",
    "zzz unknown words",
    "東京",
  ];
  for (const text of texts) {
    for (const q of ["topic", "urgent", "coin"]) {
      for (
        const options of [{}, { options: ["billing", "refund"] }, {
          exposed: true,
        }]
      ) {
        const want = assess(
          r.table,
          stateOf(r.table),
          prepareText(r.table, stateOf(r.table), text),
          q,
          options,
          QUIET_GUARD,
        );
        const got = assess(
          loaded,
          stateOf(loaded),
          prepareText(loaded, stateOf(loaded), text),
          q,
          options,
          QUIET_GUARD,
        );
        assert.deepEqual(got.answer, want.answer, `${q}: ${text}`);
      }
    }
  }
  const report = loaded.info.report as { questions: { name: string }[] };
  assert.deepEqual(report.questions.map((q) => q.name), [
    "topic",
    "urgent",
    "coin",
  ]);
  // The manifest describes itself.
  const manifest = JSON.parse(
    await Deno.readTextFile(`${dir}/${MANIFEST_FILE}`),
  );
  assert.equal(manifest.format, BUNDLE_FORMAT);
  assert.equal(manifest.format_version, FORMAT_VERSION);
  assert.equal(typeof manifest.tool_version, "string");
  assert.deepEqual(Object.keys(manifest.files).sort(), [
    REPORT_FILE,
    WEIGHTS_FILE,
  ]);
});

Deno.test("writeBundleAtomically() leaves nothing behind when a write fails", async () => {
  await using tmp = await tempDir();
  const files = await bundleFiles(smallTable());
  const broken = new Map(files);
  // A name inside a folder that does not exist: the write fails after other files were written.
  broken.set("no/such/folder/extra.bin", new Uint8Array(10));
  const dir = `${tmp.path}/fresh`;
  await assert.rejects(writeBundleAtomically(dir, broken));
  assert.equal(await exists(dir), false, "no partial bundle folder");
  assert.deepEqual(await list(tmp.path), [], "no temporary folder left");
});

Deno.test("writeBundleAtomically() keeps an existing bundle intact when a replacement fails", async () => {
  await using tmp = await tempDir();
  const files = await bundleFiles(smallTable());
  const dir = `${tmp.path}/bundle`;
  await writeBundleAtomically(dir, files);
  const before = new Map<string, Uint8Array>();
  for (const name of await list(dir)) {
    before.set(name, await Deno.readFile(`${dir}/${name}`));
  }
  const broken = new Map(files);
  broken.set(WEIGHTS_FILE, new Uint8Array(3));
  broken.set("no/such/folder/extra.bin", new Uint8Array(10));
  await assert.rejects(writeBundleAtomically(dir, broken));
  assert.deepEqual(
    await list(tmp.path),
    ["bundle"],
    "no temporary or old folder left",
  );
  for (const [name, bytes] of before) {
    assert.deepEqual(await Deno.readFile(`${dir}/${name}`), bytes, name);
  }
  await loadBundle(dir);
  // A successful replacement swaps the whole folder.
  await writeBundleAtomically(`${dir}/`, files);
  assert.deepEqual(await list(tmp.path), ["bundle"]);
  await loadBundle(dir);
});

Deno.test("writeBundleAtomically() refuses to replace a folder that is not a bundle", async () => {
  await using tmp = await tempDir();
  const dir = `${tmp.path}/mine`;
  await Deno.mkdir(dir);
  await Deno.writeTextFile(`${dir}/notes.txt`, "keep me");
  await rejectsWith(
    writeBundleAtomically(dir, await bundleFiles(smallTable())),
    BundleError,
    /is not a bundle/,
  );
  assert.equal(await Deno.readTextFile(`${dir}/notes.txt`), "keep me");
  assert.deepEqual(await list(tmp.path), ["mine"]);
});

/** Writes a valid bundle, damages it with `harm`, and returns the error loading it gives. */
async function damaged(harm: (dir: string) => Promise<void>): Promise<Error> {
  await using tmp = await tempDir();
  const dir = `${tmp.path}/b`;
  await writeFiles(dir, await bundleFiles(smallTable()));
  await harm(dir);
  let error: unknown;
  try {
    await loadBundle(dir);
  } catch (e) {
    error = e;
  }
  assert.ok(
    error instanceof BundleError,
    `expected a BundleError, got ${error}`,
  );
  assert.ok(!error.message.includes("\n"), `one line: ${error.message}`);
  assert.match(error.message, /^Cannot load bundle /);
  return error;
}

async function editManifest(
  dir: string,
  edit: (m: Record<string, unknown>) => void,
): Promise<void> {
  const m = JSON.parse(await Deno.readTextFile(`${dir}/${MANIFEST_FILE}`));
  edit(m);
  await Deno.writeTextFile(`${dir}/${MANIFEST_FILE}`, JSON.stringify(m));
}

Deno.test("loadBundle() refuses a damaged, truncated, incomplete or foreign bundle with one line", async (t) => {
  const cases: [string, (dir: string) => Promise<void>, RegExp][] = [
    ["a flipped byte in the weights", async (dir) => {
      const w = await Deno.readFile(`${dir}/${WEIGHTS_FILE}`);
      w[Math.floor(w.length / 2)]! ^= 0x01;
      await Deno.writeFile(`${dir}/${WEIGHTS_FILE}`, w);
    }, /weights\.bin does not match its checksum/],
    ["a truncated weights file", async (dir) => {
      const w = await Deno.readFile(`${dir}/${WEIGHTS_FILE}`);
      await Deno.writeFile(
        `${dir}/${WEIGHTS_FILE}`,
        w.subarray(0, w.length - 7),
      );
    }, /weights\.bin is \d+ bytes, the manifest says \d+/],
    ["an edited report", async (dir) => {
      await Deno.writeTextFile(`${dir}/${REPORT_FILE}`, "{}\n");
    }, /report\.json/],
    [
      "a missing weights file",
      (dir) => Deno.remove(`${dir}/${WEIGHTS_FILE}`),
      /weights\.bin is missing/,
    ],
    [
      "a missing report",
      (dir) => Deno.remove(`${dir}/${REPORT_FILE}`),
      /report\.json is missing/,
    ],
    [
      "a missing manifest",
      (dir) => Deno.remove(`${dir}/${MANIFEST_FILE}`),
      /manifest\.json is missing/,
    ],
    [
      "a manifest that is not JSON",
      (dir) => Deno.writeTextFile(`${dir}/${MANIFEST_FILE}`, "{ nope"),
      /not valid JSON/,
    ],
    [
      "a foreign manifest",
      (dir) => editManifest(dir, (m) => (m.format = "some-other-model")),
      /not a decision-table bundle manifest/,
    ],
    [
      "a future format version",
      (dir) => editManifest(dir, (m) => (m.format_version = FUTURE_VERSION)),
      new RegExp(`format version ${FUTURE_VERSION} is not supported`),
    ],
    [
      "an edited threshold in the manifest",
      (dir) =>
        editManifest(dir, (m) => {
          const qs = m.questions as { calibration: { threshold: number } }[];
          qs[0]!.calibration.threshold = 0.01;
        }),
      /manifest\.json does not match its checksum/,
    ],
    [
      "a manifest without questions",
      (dir) => editManifest(dir, (m) => (m.questions = [])),
      /lists no questions/,
    ],
    [
      "a folder that does not exist",
      (dir) => Deno.remove(dir, { recursive: true }),
      /no such folder/,
    ],
    ["a file instead of a folder", async (dir) => {
      await Deno.remove(dir, { recursive: true });
      await Deno.writeTextFile(dir, "x");
    }, /not a folder/],
  ];
  for (const [name, harm, pattern] of cases) {
    await t.step(name, async () => {
      const e = await damaged(harm);
      assert.match(e.message, pattern);
    });
  }
});

Deno.test("inspect on a damaged bundle exits 2 with one line on stderr", async () => {
  await using tmp = await tempDir();
  const dir = `${tmp.path}/b`;
  await writeFiles(dir, await bundleFiles(smallTable()));
  const w = await Deno.readFile(`${dir}/${WEIGHTS_FILE}`);
  w[100]! ^= 0xff;
  await Deno.writeFile(`${dir}/${WEIGHTS_FILE}`, w);
  for (const bundle of [dir, `${tmp.path}/missing`]) {
    const run = await runCli(["inspect", "--bundle", bundle]);
    assert.equal(run.code, 2);
    assert.equal(run.stdout, "");
    const lines = run.stderr.trimEnd().split("\n");
    assert.equal(lines.length, 1, run.stderr);
    assert.match(lines[0]!, /Cannot load bundle/);
  }
});

Deno.test("writeBundleAtomically() fails cleanly when the parent cannot hold a folder", async () => {
  await using tmp = await tempDir();
  await Deno.writeTextFile(`${tmp.path}/plain-file`, "x");
  await assert.rejects(
    writeBundleAtomically(
      `${tmp.path}/plain-file/bundle`,
      await bundleFiles(smallTable()),
    ),
  );
  assert.deepEqual(await list(tmp.path), ["plain-file"]);
  assert.equal(await Deno.readTextFile(`${tmp.path}/plain-file`), "x");
});

Deno.test("train exits 2 with one line when the bundle cannot be written", async () => {
  await using tmp = await tempDir();
  const traces = `${tmp.path}/t.jsonl`;
  await Deno.writeTextFile(
    traces,
    toJsonl(syntheticTraces({ count: 600, seed: 2 })),
  );
  await Deno.writeTextFile(`${tmp.path}/plain-file`, "x");
  const run = await runCli([
    "train",
    "--traces",
    traces,
    "--out",
    `${tmp.path}/plain-file/bundle`,
    "--quiet",
  ]);
  assert.equal(run.code, 2, run.stderr);
  assert.equal(run.stderr.trimEnd().split("\n").length, 1, run.stderr);
  assert.match(run.stderr, /plain-file/, "the error names the path");
  assert.deepEqual(await list(tmp.path), ["plain-file", "t.jsonl"]);
});

Deno.test("loadBundle() keeps the out-of-scope references, live candidates, out-of-scope level and training settings of format 3", async () => {
  await using tmp = await tempDir();
  const r = smallTable(SCOPED);
  const dir = `${tmp.path}/bundle`;
  await writeBundleAtomically(dir, await bundleFiles(r));
  const loaded = await loadBundle(dir);
  assert.equal(loaded.info.format_version, 3);
  assert.equal(loaded.settings.drift.scope_p, 0.05);
  const training = loaded.info.training as Record<string, unknown>;
  assert.equal(training.seed, r.report.seed);
  assert.equal(training.learning_rate, DEFAULT_TRAIN_OPTIONS.learningRate);
  assert.equal(training.ensemble, DEFAULT_TRAIN_OPTIONS.ensemble);
  const manifest = JSON.parse(
    await Deno.readTextFile(`${dir}/${MANIFEST_FILE}`),
  );
  for (const q of r.table.questions) {
    const l = loaded.byName.get(q.name)!;
    assert.equal(l.drift.scope.score, q.drift.scope.score);
    assert.equal(
      l.drift.scope.score,
      q.options.length >= 3 ? DEFAULT_TRAIN_OPTIONS.scopeScore : null,
    );
    assert.deepEqual(l.drift.scope.values, q.drift.scope.values);
    assert.equal(
      l.drift.scope.values.length > 0,
      q.options.length >= 3,
      `${q.name}: a reference only for choices of three or more`,
    );
    assert.deepEqual(l.calibration.candidates, q.calibration.candidates);
    if (q.calibration.threshold !== null) {
      assert.ok(l.calibration.candidates.includes(q.calibration.threshold));
    }
    const mq = manifest.questions.find((m: { name: string }) =>
      m.name === q.name
    );
    const model = r.report.questions.find((x) => x.name === q.name)!.model;
    assert.deepEqual(mq.model, { l2: model.l2, epochs: model.epochs });
  }
});

/**
 * The bundle of `r` as an older format wrote it: format 1 with no
 * out-of-scope reference, candidates or scope_p; format 2 with `energies`
 * per question (as many as its drift scores) and no training settings.
 */
async function olderBundle(
  r: TrainResult,
  version: 1 | 2,
  energies: (q: QuestionTable) => Float32Array = (q) => q.drift.scores,
): Promise<Map<string, Uint8Array>> {
  const header = new Uint8Array(16);
  header.set(new TextEncoder().encode("DTWEIGHT"));
  new DataView(header.buffer).setUint32(8, version, true);
  new DataView(header.buffer).setUint32(12, r.rowBuckets.length, true);
  const parts: ArrayBufferView[] = [header, r.rowBuckets];
  for (const q of r.table.questions) {
    parts.push(
      q.weights,
      q.bias,
      q.wordGain,
      q.bigramGain,
      q.drift.scores,
      q.drift.novelty,
    );
    if (version === 2) parts.push(energies(q));
  }
  const weights = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    weights.set(new Uint8Array(p.buffer, p.byteOffset, p.byteLength), at);
    at += p.byteLength;
  }
  const files = await bundleFiles(r);
  const report = files.get(REPORT_FILE)!;
  const manifest = JSON.parse(
    new TextDecoder().decode(files.get(MANIFEST_FILE)!),
  );
  delete manifest.manifest_sha256;
  delete manifest.training;
  manifest.format_version = version;
  for (const q of manifest.questions) {
    delete q.scope_score;
    delete q.scope_values;
    delete q.model;
    delete q.calibration.bands; // written since the live feedback check
    if (version === 1) delete q.calibration.candidates;
  }
  if (version === 1) delete manifest.settings.drift.scope_p;
  else manifest.settings.drift.scope_p = 0.01;
  manifest.files[WEIGHTS_FILE] = {
    sha256: await sha256Hex(weights),
    bytes: weights.byteLength,
  };
  manifest.manifest_sha256 = await sha256Hex(
    new TextEncoder().encode(JSON.stringify(manifest)),
  );
  return new Map([
    [MANIFEST_FILE, new TextEncoder().encode(JSON.stringify(manifest))],
    [WEIGHTS_FILE, weights],
    [REPORT_FILE, report],
  ]);
}

Deno.test("loadBundle() reads a format 2 bundle with the energy rule it was calibrated with", async () => {
  await using tmp = await tempDir();
  const r = smallTable(SCOPED);
  const dir = `${tmp.path}/v2`;
  // Stand-in energies: any sorted values the rule can judge against.
  const energies = (q: QuestionTable) =>
    Float32Array.from(q.drift.scores, (_, i) => i - 1e6);
  await writeFiles(dir, await olderBundle(r, 2, energies));
  const loaded = await loadBundle(dir);
  assert.equal(loaded.info.format_version, 2);
  assert.equal(loaded.settings.drift.scope_p, 0.01);
  assert.equal(loaded.info.training, null);
  for (const q of r.table.questions) {
    const l = loaded.byName.get(q.name)!;
    assert.equal(l.drift.scope.score, "energy");
    assert.deepEqual(l.drift.scope.values, energies(q));
  }
  // Every real text has far more energy than the stand-ins: in scope.
  const a = assess(
    loaded,
    stateOf(loaded),
    prepareText(loaded, stateOf(loaded), "invoice parcel refund password"),
    "topic",
    {},
    QUIET_GUARD,
  );
  assert.notEqual(a.answer.driftRule, "out_of_scope");
});

Deno.test("loadBundle() reads a format 1 bundle, with the out-of-scope rule off and no live candidates", async () => {
  await using tmp = await tempDir();
  const r = smallTable(SCOPED);
  const dir = `${tmp.path}/old`;
  await writeFiles(dir, await olderBundle(r, 1));
  const loaded = await loadBundle(dir);
  assert.equal(loaded.settings.drift.scope_p, 0);
  for (const q of loaded.questions) {
    assert.equal(q.drift.scope.values.length, 0);
    assert.deepEqual(q.calibration.candidates, []);
    assert.deepEqual(
      q.drift.novelty,
      r.table.byName.get(q.name)!.drift.novelty,
    );
  }
  // It answers as the table did, but for the out-of-scope rule.
  const text = "i need my parcel";
  const a = assess(
    loaded,
    stateOf(loaded),
    prepareText(loaded, stateOf(loaded), text),
    "topic",
    {},
    QUIET_GUARD,
  );
  assert.equal(a.answer.choice, "shipping");
});

Deno.test("a format 3 bundle without calibration bands still loads (its feedback unchecked); bands that do not fit the live grid are refused", async () => {
  await using tmp = await tempDir();
  const r = smallTable(SCOPED);
  const files = await bundleFiles(r);
  const manifest = JSON.parse(
    new TextDecoder().decode(files.get(MANIFEST_FILE)!),
  );
  assert.ok(
    manifest.questions.some((q: { calibration: { bands?: unknown } }) =>
      Array.isArray(q.calibration.bands)
    ),
    "the trainer writes bands",
  );
  const resealed = async (edit: (m: typeof manifest) => void) => {
    const m = structuredClone(manifest);
    delete m.manifest_sha256;
    edit(m);
    m.manifest_sha256 = await sha256Hex(
      new TextEncoder().encode(JSON.stringify(m)),
    );
    const out = new Map(files);
    out.set(MANIFEST_FILE, new TextEncoder().encode(JSON.stringify(m)));
    return out;
  };
  const plain = `${tmp.path}/plain`;
  await writeFiles(
    plain,
    await resealed((m) => {
      for (const q of m.questions) delete q.calibration.bands;
    }),
  );
  const loaded = await loadBundle(plain);
  for (const q of loaded.questions) {
    assert.equal(q.calibration.bands, undefined);
    assert.equal(newCertificate(q, 0.05).checked, false);
  }
  const bad = `${tmp.path}/bad`;
  await writeFiles(
    bad,
    await resealed((m) => {
      const q = m.questions.find((q: { calibration: { bands?: unknown[] } }) =>
        Array.isArray(q.calibration.bands)
      );
      q.calibration.bands = q.calibration.bands.slice(1);
    }),
  );
  await assert.rejects(
    () => loadBundle(bad),
    /malformed calibration bands for question/,
  );
});
