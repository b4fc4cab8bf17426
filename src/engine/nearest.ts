/**
 * The nearest-text score of the second tier's novelty guard: one minus the
 * largest cosine between a text's embedding and the stored training texts'
 * embeddings. A text far from every text the tier was fitted on is a
 * request the traces did not cover, even when it lies near an option's
 * mean (where the Mahalanobis score looks).
 *
 * The training texts are stored compactly: each unit-length embedding as
 * `dim` signed bytes with one f32 scale (the largest coordinate over 127),
 * so a stored text takes `dim + 4` bytes (516 for the 512-number encoder)
 * and the cosine is read back to about 1e-3. Pure.
 *
 * @module
 */

/** The stored training texts and the calibration texts' distances. */
export interface NearestReference {
  /** Numbers per embedding. */
  dim: number;
  /** `count × dim` signed bytes, row-major: text `i` is `codes[i*dim ..] * scales[i]`. */
  codes: Int8Array;
  /** One scale per stored text. */
  scales: Float32Array;
  /** The calibration texts' distances, sorted ascending. */
  scores: Float32Array;
}

/**
 * Stores the embeddings `indices` of `embeddings` at unit length as bytes
 * with a scale each (see the module doc); a zero embedding is stored as
 * zeros (cosine 0 with everything).
 */
export function quantizeTexts(
  embeddings: readonly ArrayLike<number>[],
  indices: readonly number[],
  dim: number,
): { codes: Int8Array; scales: Float32Array } {
  const codes = new Int8Array(indices.length * dim);
  const scales = new Float32Array(indices.length);
  indices.forEach((i, row) => {
    const e = embeddings[i]!;
    let norm = 0;
    let top = 0;
    for (let d = 0; d < dim; d++) {
      const x = e[d]!;
      norm += x * x;
      if (Math.abs(x) > top) top = Math.abs(x);
    }
    norm = Math.sqrt(norm);
    if (norm === 0 || top === 0) return;
    const scale = top / norm / 127;
    scales[row] = scale;
    const base = row * dim;
    for (let d = 0; d < dim; d++) {
      codes[base + d] = Math.round(e[d]! / norm / scale);
    }
  });
  return { codes, scales };
}

/**
 * One minus the largest cosine between `embedding` and a stored text
 * (between 0 and 2); 2 with no stored text. Throws a RangeError for an
 * embedding of the wrong size. Cost: one pass over `count × dim` bytes.
 */
export function nearestDistance(
  ref: NearestReference,
  embedding: ArrayLike<number>,
): number {
  const dim = ref.dim;
  if (embedding.length !== dim) {
    throw new RangeError(
      `The embedding has ${embedding.length} numbers; the stored texts have ${dim}`,
    );
  }
  let norm = 0;
  for (let d = 0; d < dim; d++) norm += embedding[d]! * embedding[d]!;
  norm = Math.sqrt(norm);
  if (norm === 0) return 2;
  const u = new Float64Array(dim);
  for (let d = 0; d < dim; d++) u[d] = embedding[d]! / norm;
  const codes = ref.codes;
  let best = -Infinity;
  for (let row = 0; row < ref.scales.length; row++) {
    const base = row * dim;
    let s = 0;
    for (let d = 0; d < dim; d++) s += u[d]! * codes[base + d]!;
    s *= ref.scales[row]!;
    if (s > best) best = s;
  }
  return best === -Infinity ? 2 : 1 - best;
}
