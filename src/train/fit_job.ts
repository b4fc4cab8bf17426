/**
 * One fit of one question: the unit of work that runs in-process or in a
 * worker (see `pool.ts`), with the same result either way.
 *
 * A **validation** fit trains on the fit part and scores the validation
 * part after each epoch; it keeps the logits of the epoch with the lowest
 * validation log-loss and stops once `patience` epochs in a row did not
 * improve on it. A **final** fit trains on the whole train split for a given
 * number of epochs and returns its weights. Everything a job reads is typed
 * arrays (shared memory when workers run it); everything it returns is
 * written into arrays the caller gave it.
 *
 * @module
 */

import type { TrainingLayout } from "./corpus.ts";
import { logitsOf, type SgdOptions, trainSoftmax } from "./softmax_sgd.ts";
import { fitTemperature, meanNll } from "./temperature.ts";

/** One question's training data, as jobs read it. */
export interface QuestionData {
  /** Per trace, the answer's option index (-1: unanswered). */
  labels: Int32Array;
  /** Traces of the fit part, of the validation part, and of both (ascending). */
  fit: Int32Array;
  validation: Int32Array;
  train: Int32Array;
  /**
   * Per validation answer, 1 when the fit part has answers of its option:
   * only those judge the epochs and the temperature (an option the fit part
   * never saw cannot be learned, and its answers would only flatten every
   * confidence).
   */
  judged: Uint8Array;
  /** Number of options. */
  options: number;
}

/** A fit to run. */
export interface FitJob {
  kind: "validation" | "final";
  /** Index of the question in the list the runner was given. */
  question: number;
  /** Validation: most epochs; final: the epochs to train. */
  epochs: number;
  /** Validation: epochs without improvement before stopping. */
  patience: number;
  sgd: SgdOptions;
  /** Validation: the best epoch's validation logits (`validation × options`). */
  logits?: Float64Array;
  /**
   * Final: the weights (`rows × options`) and biases, written in place.
   * Validation, when given: the best epoch's weights and biases.
   */
  weights?: Float32Array;
  bias?: Float32Array;
  /** Written by the job: `[0]` the best (validation) or trained (final) epochs. */
  done: Int32Array;
  /** Written as the job goes: `[0]` epoch, `[1]` examples of this epoch done. */
  progress: Float64Array;
}

/**
 * Most validation answers times options whose log-loss chooses the epoch
 * (an even subsample beyond, of at least `EPOCH_CHOICE_MIN` answers): the
 * temperature fit behind each loss reads every logit 40 times.
 */
export const EPOCH_CHOICE_CELLS = 1_500_000;
/** Fewest validation answers the epoch is chosen on (all when there are fewer). */
export const EPOCH_CHOICE_MIN = 2_000;

/**
 * Runs a fit job (see the module doc). Deterministic for the job's seed.
 * `onTick` is called whenever `job.progress` moves.
 */
export function runFitJob(
  layout: TrainingLayout,
  rows: number,
  question: QuestionData,
  job: FitJob,
  onTick?: () => void,
): void {
  const k = question.options;
  const tick = (epoch: number, examples: number) => {
    job.progress[0] = epoch;
    job.progress[1] = examples;
    onTick?.();
  };
  if (job.kind === "final") {
    const model = trainSoftmax(
      layout,
      question.labels,
      question.train,
      k,
      rows,
      job.sgd,
      undefined,
      tick,
      job.weights,
    );
    job.bias!.set(model.bias);
    job.done[0] = job.epochs;
    return;
  }
  const val = question.validation;
  const labels = Int32Array.from(val, (i) => question.labels[i]!);
  const current = new Float64Array(val.length * k);
  const scratch = new Float64Array(k);
  // The epoch is chosen on an even subsample (see EPOCH_CHOICE_CELLS).
  const sampled = Math.max(
    EPOCH_CHOICE_MIN,
    Math.floor(EPOCH_CHOICE_CELLS / k),
  );
  const judged = question.judged;
  const judgedCount = judged.reduce((n, j) => n + j, 0);
  const stride = Math.max(1, Math.ceil(judgedCount / sampled));
  // Position of each validation answer in the sample, -1 when left out.
  const sampleAt = new Int32Array(val.length).fill(-1);
  let sampled_ = 0;
  for (let t = 0, seen = 0; t < val.length; t++) {
    if (judged[t] === 0) continue;
    if (seen++ % stride === 0) sampleAt[t] = sampled_++;
  }
  const sampleLabels = labels.filter((_, t) => sampleAt[t]! >= 0);
  const sample = new Float64Array(sampleLabels.length * k);
  let best = Infinity;
  let bestEpoch = 0;
  trainSoftmax(
    layout,
    question.labels,
    question.fit,
    k,
    rows,
    { ...job.sgd, epochs: job.epochs },
    (epoch, model) => {
      for (let t = 0; t < val.length; t++) {
        logitsOf(model, k, layout, val[t]!, scratch);
        current.set(scratch, t * k);
        if (sampleAt[t]! >= 0) sample.set(scratch, sampleAt[t]! * k);
      }
      const nll = meanNll(
        sample,
        sampleLabels,
        k,
        fitTemperature(sample, sampleLabels, k),
      );
      if (nll < best) {
        best = nll;
        bestEpoch = epoch;
        job.logits!.set(current);
        job.weights?.set(model.weights);
        job.bias?.set(model.bias);
      }
      return epoch - bestEpoch < job.patience;
    },
    tick,
  );
  job.done[0] = bestEpoch;
}
