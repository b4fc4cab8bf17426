/**
 * The bundle format: a manifest, a binary weights file and a report, as
 * bytes. Pure: no file access (see `files.ts` for that).
 *
 * `manifest.json` names the format and its version, the tool version, the
 * featurizer, the settings, every question (kind, options, temperature,
 * calibration, sizes) and the SHA-256 and size of every other file.
 * `weights.bin` is little-endian: the 8-byte tag `DTWEIGHT`, a u32 format
 * version, a u32 row count, the row buckets (i32 each), then per question in
 * manifest order: weights (`rows × K` f32), bias (`K` f32), word gain and
 * bigram gain (`K × K` f32 each), the sorted calibration drift scores,
 * the sorted calibration novelty shares and the out-of-scope rule's sorted
 * calibration scores (f32 each; see below).
 *
 * Format 3 stores the out-of-scope rule's score per question (`scope_score`,
 * `energy` or `spread`, with `scope_values` of them; null and none for
 * questions of two options) and how the table was trained (`training`: the fit settings and
 * what validation chose, as fastText stores its arguments). Format 2 stored
 * the energies instead (as many as the drift scores), each question's live
 * candidate thresholds and the `scope_p` setting; a format 1 bundle is read
 * with neither (the out-of-scope rule off, the live certificate on the
 * bundle's threshold alone).
 *
 * Format 4 is format 3 plus the second tiers (`semantic_part.ts`): a
 * `semantic.bin` file, the encoder named in the manifest and a `semantic`
 * entry per question that has one. A table without a second tier is still
 * written as format 3, byte for byte as before.
 *
 * @module
 */

import { createHash } from "node:crypto";
import {
  type Calibration,
  type FeaturizerSettings,
  NO_SCOPE,
  type QuestionKind,
  type QuestionTable,
  SCOPE_SCORES,
  type ScopeScore,
  type Table,
  type TableSettings,
} from "../engine/mod.ts";
import { liveGrid } from "../guarantee/mod.ts";
import {
  checkEncoder,
  checkSemanticEntry,
  decodeSemantic,
  encodeSemantic,
  type ManifestSemantic,
  SEMANTIC_FILE,
  SEMANTIC_VERSION,
} from "./semantic_part.ts";
import { type EncoderName, THIS_ENCODER } from "../encoder/mod.ts";

/** Names the format in every manifest. */
export const BUNDLE_FORMAT = "decision-table-bundle";
/** The version of the format this program writes for a table alone (with second tiers: 4). */
export const FORMAT_VERSION = 3;
/** The versions this program reads. */
export const READABLE_VERSIONS: readonly number[] = [1, 2, 3, 4];
/** The files of a bundle. */
export const MANIFEST_FILE = "manifest.json";
export const WEIGHTS_FILE = "weights.bin";
export const REPORT_FILE = "report.json";

const WEIGHTS_TAG = "DTWEIGHT";

/** A bundle that cannot be used; the message is one line. */
export class BundleError extends Error {
  override name = "BundleError";
}

/** One question as the manifest describes it. */
export interface ManifestQuestion {
  name: string;
  kind: QuestionKind;
  options: string[];
  temperature: number;
  calibration: Calibration;
  drift_scores: number;
  /** Format 3: the out-of-scope rule's score, and how many calibration scores it keeps (0: off). */
  scope_score?: ScopeScore | null;
  scope_values?: number;
  /** Format 3: what the fit chose for this question. */
  model?: { l2: number; epochs: number };
  /** Format 4: the question's second tier (null: none). */
  semantic?: ManifestSemantic | null;
}

/** The manifest's contents. */
export interface Manifest {
  format: string;
  format_version: number;
  tool_version: string;
  featurizer: FeaturizerSettings;
  settings: TableSettings;
  rows: number;
  /** Format 3: how the table was trained (fit settings, split, targets; written by `src/train/`). */
  training?: JsonRecord;
  /** Format 4: the encoder whose embeddings the second tiers read. */
  encoder?: EncoderName;
  questions: ManifestQuestion[];
  files: Record<string, { sha256: string; bytes: number }>;
  /** SHA-256 of this manifest's compact JSON without this field. */
  manifest_sha256?: string;
}

/**
 * Hex SHA-256 of some bytes. Hashed in place on this thread (`node:crypto`):
 * WebCrypto's digest copies the bytes to a worker thread first, and for a
 * 10 MB weights file on every reload those copies stay in that thread's
 * malloc arena (resident memory that never comes back).
 */
export function sha256Hex(bytes: Uint8Array): Promise<string> {
  return Promise.resolve(createHash("sha256").update(bytes).digest("hex"));
}

/** A JSON object the format stores without reading its fields. */
export type JsonRecord = object;

/**
 * A parsed `report.json` kept as the table's report when it has the shape
 * every reader relies on (an object whose `questions`, if any, is a list
 * of objects with a string `name`); otherwise null, so readers fall back
 * to "no report" rather than read a field of something else.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { reportRecord } from "./codec.ts";
 * assert.deepEqual(reportRecord({ questions: [{ name: "topic" }] }), { questions: [{ name: "topic" }] });
 * assert.equal(reportRecord({ questions: [{}] }), null);
 * ```
 */
export function reportRecord(parsed: unknown): JsonRecord | null {
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return null;
  }
  const questions = (parsed as { questions?: unknown }).questions;
  if (
    questions !== undefined &&
    !(Array.isArray(questions) &&
      questions.every((q) =>
        typeof q === "object" && q !== null &&
        typeof (q as { name?: unknown }).name === "string"
      ))
  ) {
    return null;
  }
  return parsed as JsonRecord;
}

/** What the trainer hands over to be written. */
export interface BundleContents {
  featurizer: FeaturizerSettings;
  settings: TableSettings;
  toolVersion: string;
  rowBuckets: Int32Array;
  questions: QuestionTable[];
  /** How the table was trained, stored in the manifest (the trainer's record; the format keeps it as it is). */
  training: JsonRecord;
  /** Per question (in order), what the fit chose. */
  models: { l2: number; epochs: number }[];
  /** The training report, written as `report.json` (the trainer's; read back typed by `src/train/`). */
  report: JsonRecord;
}

/** Encodes a trained table and its report as the bundle's files. */
export async function encodeBundle(
  c: BundleContents,
): Promise<Map<string, Uint8Array>> {
  const parts: ArrayBufferView[] = [];
  const semantic = c.questions.some((q) => q.semantic !== undefined)
    ? encodeSemantic(c.questions)
    : null;
  const version = semantic === null ? FORMAT_VERSION : SEMANTIC_VERSION;
  const header = new Uint8Array(16);
  header.set(new TextEncoder().encode(WEIGHTS_TAG), 0);
  const view = new DataView(header.buffer);
  view.setUint32(8, version, true);
  view.setUint32(12, c.rowBuckets.length, true);
  parts.push(header, c.rowBuckets);
  for (const q of c.questions) {
    parts.push(
      q.weights,
      q.bias,
      q.wordGain,
      q.bigramGain,
      q.drift.scores,
      q.drift.novelty,
      q.drift.scope.values,
    );
  }
  const size = parts.reduce((n, p) => n + p.byteLength, 0);
  const weights = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    const bytes = new Uint8Array(p.buffer, p.byteOffset, p.byteLength);
    if (!littleEndian && !(p instanceof Uint8Array)) {
      throw new Error("big-endian hosts are not supported");
    }
    weights.set(bytes, at);
    at += p.byteLength;
  }
  const report = new TextEncoder().encode(
    JSON.stringify(c.report, null, 2) + "\n",
  );
  const manifest: Manifest = {
    format: BUNDLE_FORMAT,
    format_version: version,
    tool_version: c.toolVersion,
    featurizer: c.featurizer,
    settings: c.settings,
    rows: c.rowBuckets.length,
    training: c.training,
    ...(semantic === null ? {} : { encoder: THIS_ENCODER }),
    questions: c.questions.map((q, i) => ({
      name: q.name,
      kind: q.kind,
      options: q.options,
      temperature: q.temperature,
      calibration: q.calibration,
      drift_scores: q.drift.scores.length,
      scope_score: q.drift.scope.score,
      scope_values: q.drift.scope.values.length,
      model: c.models[i]!,
      ...(semantic === null ? {} : { semantic: semantic.entries[i]! }),
    })),
    files: {
      [WEIGHTS_FILE]: {
        sha256: await sha256Hex(weights),
        bytes: weights.byteLength,
      },
      [REPORT_FILE]: {
        sha256: await sha256Hex(report),
        bytes: report.byteLength,
      },
      ...(semantic === null ? {} : {
        [SEMANTIC_FILE]: {
          sha256: await sha256Hex(semantic.bytes),
          bytes: semantic.bytes.byteLength,
        },
      }),
    },
  };
  manifest.manifest_sha256 = await sha256Hex(
    new TextEncoder().encode(JSON.stringify(manifest)),
  );
  const manifestBytes = new TextEncoder().encode(
    JSON.stringify(manifest, null, 2) + "\n",
  );
  const files = new Map<string, Uint8Array>([
    [MANIFEST_FILE, manifestBytes],
    [WEIGHTS_FILE, weights],
    [REPORT_FILE, report],
  ]);
  if (semantic !== null) files.set(SEMANTIC_FILE, semantic.bytes);
  return files;
}

const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** Parses and checks a manifest; throws `BundleError` for anything foreign. */
export function parseManifest(bytes: Uint8Array): Manifest {
  let m: unknown;
  try {
    m = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw new BundleError(`${MANIFEST_FILE} is not valid JSON`);
  }
  if (
    typeof m !== "object" || m === null ||
    (m as Manifest).format !== BUNDLE_FORMAT
  ) {
    throw new BundleError(
      `${MANIFEST_FILE} is not a decision-table bundle manifest`,
    );
  }
  const manifest = m as Manifest;
  if (!READABLE_VERSIONS.includes(manifest.format_version)) {
    throw new BundleError(
      `bundle format version ${manifest.format_version} is not supported (this program reads versions ${
        READABLE_VERSIONS.join(" and ")
      })`,
    );
  }
  if (!Array.isArray(manifest.questions) || manifest.questions.length === 0) {
    throw new BundleError(`${MANIFEST_FILE} lists no questions`);
  }
  const f = manifest.featurizer;
  if (
    typeof f !== "object" || f === null || !Number.isInteger(f.buckets_log2) ||
    f.buckets_log2 < 4 ||
    f.buckets_log2 > 28
  ) {
    throw new BundleError(`${MANIFEST_FILE} has no valid featurizer settings`);
  }
  if (!(Number.isInteger(f.ngram_average_min) && f.ngram_average_min >= 1)) {
    throw new BundleError(
      `${MANIFEST_FILE} has no valid featurizer settings (ngram_average_min)`,
    );
  }
  for (const q of manifest.questions) {
    if (
      typeof q?.name !== "string" || !Array.isArray(q.options) ||
      q.options.length < 2 ||
      (q.kind !== "choice" && q.kind !== "yes_no") || !(q.temperature > 0)
    ) {
      throw new BundleError(`${MANIFEST_FILE} has a malformed question entry`);
    }
  }
  const st = manifest.settings;
  const drift = st?.drift;
  if (
    typeof st !== "object" || st === null ||
    typeof st.min_radius !== "number" ||
    typeof st.serve_new_options !== "boolean" ||
    typeof st.force_thresholds !== "object" ||
    typeof drift?.single_p !== "number" ||
    typeof drift.max_novelty !== "number" ||
    typeof drift.min_novelty !== "number" ||
    typeof drift.delta !== "number" || typeof drift.rearm_window !== "number" ||
    (manifest.format_version >= 2 && typeof drift.scope_p !== "number")
  ) {
    throw new BundleError(`${MANIFEST_FILE} has no valid settings`);
  }
  for (const q of manifest.questions) {
    if (
      manifest.format_version >= 3 &&
      (!(q.scope_score === null || SCOPE_SCORES.includes(q.scope_score!)) ||
        !Number.isInteger(q.scope_values) || q.scope_values! < 0)
    ) {
      throw new BundleError(
        `${MANIFEST_FILE} has a malformed out-of-scope reference for question "${q.name}"`,
      );
    }
  }
  for (const q of manifest.questions) {
    const c = q.calibration.candidates;
    if (manifest.format_version < 2 && c === undefined) continue;
    if (!Array.isArray(c) || c.some((t) => typeof t !== "number")) {
      throw new BundleError(
        `${MANIFEST_FILE} has malformed live candidates for question "${q.name}"`,
      );
    }
  }
  if (typeof manifest.files !== "object" || manifest.files === null) {
    throw new BundleError(`${MANIFEST_FILE} has no file checksums`);
  }
  if (manifest.format_version >= SEMANTIC_VERSION) {
    try {
      checkEncoder(manifest.encoder);
      for (const q of manifest.questions) {
        if (q.semantic !== null && q.semantic !== undefined) {
          checkSemanticEntry(q.name, q.semantic, q.options.length);
        }
      }
    } catch (e) {
      throw new BundleError((e as Error).message);
    }
    if (manifest.files[SEMANTIC_FILE] === undefined) {
      throw new BundleError(
        `${MANIFEST_FILE} has no checksum for ${SEMANTIC_FILE}`,
      );
    }
  }
  return manifest;
}

/**
 * Checks a question's optional calibration bands (format 3 bundles written
 * since the live feedback check): one per live candidate, edge for edge,
 * with whole counts. Throws `BundleError` naming the question.
 */
function checkBands(q: ManifestQuestion): void {
  const bands = q.calibration.bands;
  if (bands === undefined) return;
  const grid = liveGrid(
    q.calibration.candidates ?? [],
    q.calibration.threshold,
  );
  const ok = Array.isArray(bands) && bands.length === grid.length &&
    bands.every((b, j) =>
      typeof b === "object" && b !== null &&
      Math.abs(b.lower - grid[j]!) <= 1e-9 &&
      Number.isInteger(b.answers) && Number.isInteger(b.disagreements) &&
      b.disagreements >= 0 && b.disagreements <= b.answers &&
      (b.effective === undefined ||
        (typeof b.effective === "number" && b.effective > 0 &&
          b.effective <= b.answers))
    );
  if (!ok) {
    throw new BundleError(
      `${MANIFEST_FILE} has malformed calibration bands for question "${q.name}" (one per live candidate, with whole counts)`,
    );
  }
}

/**
 * Checks the manifest's own checksum (thresholds, options and settings live
 * there); throws `BundleError` when it is missing or does not match.
 */
export async function verifyManifest(manifest: Manifest): Promise<void> {
  const { manifest_sha256: expected, ...rest } = manifest;
  if (typeof expected !== "string") {
    throw new BundleError(`${MANIFEST_FILE} has no checksum of its own`);
  }
  const actual = await sha256Hex(
    new TextEncoder().encode(JSON.stringify(rest)),
  );
  if (actual !== expected) {
    throw new BundleError(
      `${MANIFEST_FILE} does not match its checksum: damaged bundle`,
    );
  }
}

/** Checks a file against its manifest entry; throws `BundleError` on a mismatch. */
export async function verifyFile(
  manifest: Manifest,
  name: string,
  bytes: Uint8Array,
): Promise<void> {
  const entry = manifest.files[name];
  if (entry === undefined) {
    throw new BundleError(`${MANIFEST_FILE} has no checksum for ${name}`);
  }
  if (bytes.byteLength !== entry.bytes) {
    throw new BundleError(
      `${name} is ${bytes.byteLength} bytes, the manifest says ${entry.bytes}: damaged bundle`,
    );
  }
  if (await sha256Hex(bytes) !== entry.sha256) {
    throw new BundleError(
      `${name} does not match its checksum: damaged bundle`,
    );
  }
}

/**
 * Builds a table from checked manifest and weights; throws `BundleError` on
 * a size mismatch. When `weights` spans its whole buffer, the table's
 * arrays are views of that buffer (the caller hands it over and must not
 * change it); otherwise they are a copy.
 */
export function decodeTable(
  manifest: Manifest,
  weights: Uint8Array,
  report: unknown,
  semantic?: Uint8Array,
): Table {
  // After the manifest's checksum: bands that do not fit its thresholds.
  for (const q of manifest.questions) checkBands(q);
  const tag = new TextDecoder().decode(weights.subarray(0, 8));
  if (weights.byteLength < 16 || tag !== WEIGHTS_TAG) {
    throw new BundleError(
      `${WEIGHTS_FILE} is not a decision-table weights file`,
    );
  }
  const view = new DataView(
    weights.buffer,
    weights.byteOffset,
    weights.byteLength,
  );
  const version = view.getUint32(8, true);
  if (version !== manifest.format_version) {
    throw new BundleError(
      `${WEIGHTS_FILE} has format version ${version}, the manifest ${manifest.format_version}`,
    );
  }
  const rows = view.getUint32(12, true);
  if (rows !== manifest.rows) {
    throw new BundleError(
      `${WEIGHTS_FILE} row count differs from the manifest`,
    );
  }
  // Typed views need an aligned buffer of their own: a file read whole is
  // one (used as it is, no second copy of the weights per load); other
  // bytes are copied.
  const buffer = weights.byteOffset === 0 &&
      weights.byteLength === weights.buffer.byteLength &&
      weights.buffer instanceof ArrayBuffer
    ? weights.buffer
    : weights.slice().buffer;
  let at = 16;
  const take = <T>(
    count: number,
    make: (b: ArrayBuffer, o: number, n: number) => T,
  ): T => {
    if (at + count * 4 > buffer.byteLength) {
      throw new BundleError(
        `${WEIGHTS_FILE} is shorter than the manifest describes`,
      );
    }
    const out = make(buffer, at, count);
    at += count * 4;
    return out;
  };
  const f32 = (n: number) => take(n, (b, o, c) => new Float32Array(b, o, c));
  const rowBuckets = take(rows, (b, o, c) => new Int32Array(b, o, c));
  const size = 1 << manifest.featurizer.buckets_log2;
  const rowOf = new Int32Array(size).fill(-1);
  for (let r = 0; r < rows; r++) {
    const b = rowBuckets[r]!;
    if (b < 0 || b >= size) {
      throw new BundleError(
        `${WEIGHTS_FILE} has a bucket outside the hash space`,
      );
    }
    rowOf[b] = r;
  }
  const questions: QuestionTable[] = manifest.questions.map((mq) => {
    const k = mq.options.length;
    return {
      name: mq.name,
      kind: mq.kind,
      options: mq.options,
      temperature: mq.temperature,
      // Format 1 knew no live candidates.
      calibration: {
        ...mq.calibration,
        candidates: mq.calibration.candidates ?? [],
      },
      weights: f32(rows * k),
      bias: f32(k),
      wordGain: f32(k * k),
      bigramGain: f32(k * k),
      drift: {
        scores: f32(mq.drift_scores),
        novelty: f32(mq.drift_scores),
        // Format 2 kept the energies, format 1 no out-of-scope reference.
        scope: version >= 3
          ? { score: mq.scope_score ?? null, values: f32(mq.scope_values!) }
          : version === 2
          ? { score: "energy", values: f32(mq.drift_scores) }
          : NO_SCOPE,
      },
      optionIndex: new Map(mq.options.map((o, i) => [o, i])),
    };
  });
  if (at !== buffer.byteLength) {
    throw new BundleError(
      `${WEIGHTS_FILE} is longer than the manifest describes`,
    );
  }
  if (version >= SEMANTIC_VERSION) {
    if (semantic === undefined) {
      throw new BundleError(`the bundle has no ${SEMANTIC_FILE}`);
    }
    try {
      decodeSemantic(
        semantic,
        manifest.questions.map((q) => q.semantic ?? null),
        questions,
      );
    } catch (e) {
      throw new BundleError((e as Error).message);
    }
  }
  const table: Table = {
    featurizer: manifest.featurizer,
    // Format 1 knew no out-of-scope rule.
    settings: version >= 2 ? manifest.settings : {
      ...manifest.settings,
      drift: { ...manifest.settings.drift, scope_p: 0 },
    },
    rowOf,
    rowCount: rows,
    questions,
    byName: new Map(questions.map((q) => [q.name, q])),
    info: {
      format: manifest.format,
      format_version: manifest.format_version,
      tool_version: manifest.tool_version,
      bundle_id: manifest.manifest_sha256 ?? null,
      training: manifest.training ?? null,
      report: reportRecord(report),
    },
  };
  return table;
}
