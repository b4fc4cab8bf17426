/**
 * The leakage check: are calibration answers easier than new traffic because
 * near-twins of them sit in the train split?
 *
 * A calibration text has a near-twin when some train-split text has a
 * TF-IDF cosine of at least `similarity` with it (see `similar.ts`). Those
 * answers are usually more accurate than the others: the table has seen
 * almost the same words with their answer. If live traffic has as many
 * near-twins in training as calibration does (exchangeable traffic), that is
 * no bias. If it has fewer (new users, new templates, new weeks), the
 * calibration answers overstate agreement by about `share with twins x
 * accuracy gap`, and certified answers may disagree more often than alpha.
 * The check reports both groups and warns, in words, when that optimism is
 * at least two points of accuracy and the gap is clearly not chance (even
 * exchangeable logs show a point or so: a text with a twin is simply easier).
 *
 * @module
 */

import { CALIBRATION, FIT, VALIDATION } from "./split.ts";
import { SimilarityIndex, textVectors } from "./similar.ts";
import { percent } from "../format.ts";

/** What the leakage check found for one question. */
export interface LeakageReport {
  /** The cosine at which two texts count as near-twins. */
  similarity: number;
  /** Calibration answers with a near-twin in the train split, and their accuracy. */
  with_twin: { answers: number; accuracy: number | null };
  /** Calibration answers without one, and their accuracy. */
  without_twin: { answers: number; accuracy: number | null };
  /** Accuracy with a twin minus accuracy without (null when a group is empty). */
  gap: number | null;
  /** How much calibration accuracy would overstate traffic without near-twins: share with twins x gap. */
  optimism: number | null;
  /** Two-proportion z statistic of the gap (null when a group is empty). */
  z: number | null;
  /** A plain-words warning when calibration is likely optimistic; null otherwise. */
  warning: string | null;
}

/** Optimism (in accuracy) from which the check warns. */
export const OPTIMISM_WARNING = 0.02;
/** The gap must also be this many standard errors from zero. */
export const Z_WARNING = 2;

/**
 * Most distinct calibration texts the check looks up (an even subsample of
 * them beyond): the figures are shares, and a million lookups would cost
 * more than training.
 */
export const LEAKAGE_SAMPLE = 5_000;
/** `calibrationTwins` value of a calibration trace left out of the subsample. */
export const NOT_CHECKED = 2;

/**
 * Per trace, 1 for a calibration trace whose text has a near-twin (cosine
 * `>= similarity`) among the train-split texts (fit and validation parts),
 * 0 for one without, and `NOT_CHECKED` for calibration texts beyond an even
 * subsample of `LEAKAGE_SAMPLE` distinct ones.
 */
export function calibrationTwins(
  texts: readonly string[],
  parts: Uint8Array,
  similarity: number,
  sample = LEAKAGE_SAMPLE,
): Uint8Array {
  // Distinct texts, train ones first so they are indexed before any probe.
  const rowOf = new Map<string, number>();
  const rows: string[] = [];
  const isTrain: boolean[] = [];
  const add = (text: string, train: boolean) => {
    if (rowOf.has(text)) return;
    rowOf.set(text, rows.length);
    rows.push(text);
    isTrain.push(train);
  };
  for (let i = 0; i < texts.length; i++) {
    if (parts[i] === FIT || parts[i] === VALIDATION) add(texts[i]!, true);
  }
  for (let i = 0; i < texts.length; i++) {
    if (parts[i] === CALIBRATION) add(texts[i]!, false);
  }
  const vectors = textVectors(rows);
  const index = new SimilarityIndex(vectors, similarity);
  const hasTwin = new Uint8Array(rows.length);
  const firstProbe = isTrain.indexOf(false);
  const probes = firstProbe < 0 ? 0 : rows.length - firstProbe;
  const stride = Math.max(1, probes / Math.max(1, sample));
  let next = firstProbe;
  for (let r = 0; r < rows.length; r++) {
    if (isTrain[r]) index.add(r);
    else if (r === Math.floor(next)) {
      next += stride;
      index.query(r, () => {
        hasTwin[r] = 1;
        return true;
      });
    } else hasTwin[r] = NOT_CHECKED;
  }
  const out = new Uint8Array(texts.length);
  for (let i = 0; i < texts.length; i++) {
    if (parts[i] === CALIBRATION) out[i] = hasTwin[rowOf.get(texts[i]!)!]!;
  }
  return out;
}

/**
 * The leakage figures of one question from its calibration answers:
 * `indices` are their traces, `wrong[t]` is 1 where answer `t` disagreed with
 * the reference model, `twins` the flags of `calibrationTwins`.
 */
export function leakageCheck(
  indices: readonly number[],
  wrong: Uint8Array,
  twins: Uint8Array,
  similarity: number,
): LeakageReport {
  let nWith = 0;
  let rightWith = 0;
  let nWithout = 0;
  let rightWithout = 0;
  indices.forEach((i, t) => {
    if (twins[i] === NOT_CHECKED) return;
    if (twins[i] === 1) {
      nWith++;
      rightWith += 1 - wrong[t]!;
    } else {
      nWithout++;
      rightWithout += 1 - wrong[t]!;
    }
  });
  const accWith = nWith === 0 ? null : rightWith / nWith;
  const accWithout = nWithout === 0 ? null : rightWithout / nWithout;
  let gap: number | null = null;
  let optimism: number | null = null;
  let z: number | null = null;
  let warning: string | null = null;
  if (accWith !== null && accWithout !== null) {
    gap = accWith - accWithout;
    const share = nWith / (nWith + nWithout);
    optimism = share * gap;
    const pooled = (rightWith + rightWithout) / (nWith + nWithout);
    const se = Math.sqrt(
      pooled * (1 - pooled) * (1 / nWith + 1 / nWithout),
    );
    z = se === 0 ? 0 : gap / se;
    if (optimism >= OPTIMISM_WARNING && z >= Z_WARNING) {
      warning =
        `${
          percent(share)
        } of calibration answers have a near-twin in the train split ` +
        `(TF-IDF cosine >= ${similarity}); they agree with the model ${
          percent(accWith)
        } of the time, ` +
        `the others ${
          percent(accWithout)
        }. For traffic with fewer near-twins (new users, templates ` +
        `or weeks), calibration overstates agreement by about ${
          (optimism * 100).toFixed(1)
        } points ` +
        `and certified answers may disagree more often than alpha: give traces a "time" or ` +
        `"group" so the split follows where they come from.`;
    }
  }
  return {
    similarity,
    with_twin: { answers: nWith, accuracy: accWith },
    without_twin: { answers: nWithout, accuracy: accWithout },
    gap,
    optimism,
    z,
    warning,
  };
}
