/**
 * Training as a library call: traces in, a trained bundle (or the reason it
 * is refused) out, the same for the `train` command, a test or the server's
 * learner. It adds to `train()` what a whole run needs: the checked
 * options, the second tier's embeddings (sampled beyond `embedMax`, read
 * from and added to an embedding cache) and the refusal rule
 * (`refusal.ts`). Writing the bundle is `writeTrainedBundle`.
 *
 * `train()` computes on the calling thread (and waits for its fit workers
 * with `Atomics.wait`): a caller that must stay responsive, such as a
 * server, runs this in a worker of its own (`src/learn/`).
 *
 * @module
 */

import { encodeBundle, writeBundleVersioned } from "../bundle/mod.ts";
import { bundleInfo } from "./bundle_info.ts";
import type { Table } from "../engine/mod.ts";
import type { TraceSet } from "../traces/mod.ts";
import { trainedContents, type TrainResult } from "./contents.ts";
import { type EmbedProgress, SILENT_EMBED } from "./embed.ts";
import type { TrainOptions } from "./options.ts";
import { uncalibratedSummary } from "./refusal.ts";
import { SEMANTIC_SAMPLE_MAX } from "./semantic_sample.ts";
import { trainTiers } from "./trainer.ts";
import {
  trainOptions as checkedTrainOptions,
  type TrainOptionsInput,
} from "./validate_options.ts";

/** What a whole training run needs beyond the training options. */
export interface TrainBundleOptions {
  /** The training options; any left out take their default, all are checked (`TrainOptionError`). */
  training: TrainOptionsInput;
  /** Beyond this many traces the second tier is fitted on a seeded sample of them (default `SEMANTIC_SAMPLE_MAX`). */
  embedMax?: number;
  /** A file of embeddings kept between runs: read, and written with the texts embedded now. */
  embedCache?: string | undefined;
  /** Encoder workers for the texts the cache lacks (default: the training workers, at most 2). */
  embedWorkers?: number;
  /** Keep a bundle with an uncalibrated question (by default it is refused). */
  allowUncalibrated?: boolean;
  /** Where embedding reports its progress (training's own goes to `training.progress`). */
  embedProgress?: EmbedProgress;
}

/** A training run's outcome. */
export interface TrainedBundle {
  /** The trained table, its rows and report. */
  result: TrainResult;
  /** The options training ran with, defaults filled in. */
  options: TrainOptions;
  /** Which questions are uncalibrated and what would help, in one line; null when none is. */
  uncalibrated: string | null;
  /** True when the bundle must not be written: a question is uncalibrated and that was not allowed. */
  refused: boolean;
  /** Seconds the run took, embedding included. */
  seconds: number;
  /** The traces' embeddings the second tier read (undefined for a trace outside the sample); absent without a second tier. */
  embeddings?: readonly (Float32Array | undefined)[];
}

/**
 * Trains `traces` with `options` (see `TrainBundleOptions`): checks the
 * options (throws `TrainOptionError`, a `RangeError`, before any work),
 * trains the table, embeds the texts when the second tier is asked for
 * and (with `auto`) could add something (the encoder is loaded only
 * then), finishes both tiers (`trainTiers`), and applies the refusal rule. Throws
 * `TrainingError` when no question can be trained. Deterministic for a
 * seed, as `train()` is.
 */
export async function trainBundle(
  options: TrainBundleOptions,
  traces: TraceSet,
): Promise<TrainedBundle> {
  const checked = checkedTrainOptions(options.training);
  const embedMax = options.embedMax ?? SEMANTIC_SAMPLE_MAX;
  if (!(Number.isInteger(embedMax) && embedMax >= 1)) {
    throw new RangeError(
      `embedMax must be a whole number >= 1: got ${embedMax}`,
    );
  }
  const started = performance.now();
  // The encoder (TensorFlow.js) is loaded only when the texts are embedded:
  // with `auto`, only where the second tier could add something.
  let embeddings: (Float32Array | undefined)[] | undefined;
  const result = await trainTiers(
    traces,
    checked,
    async () =>
      embeddings = await (await import("./embed.ts")).embedSample(
        traces.texts,
        embedMax,
        checked.seed,
        options.embedCache,
        options.embedWorkers ?? Math.min(2, checked.workers),
        options.embedProgress ?? SILENT_EMBED,
      ),
  );
  const uncalibrated = uncalibratedSummary(result.report);
  return {
    result,
    options: checked,
    uncalibrated,
    refused: uncalibrated !== null && options.allowUncalibrated !== true,
    seconds: (performance.now() - started) / 1000,
    ...(embeddings === undefined ? {} : { embeddings }),
  };
}

/**
 * Writes a trained bundle to `out` as `train --out` does: a new version
 * beside the folder, swapped in under the link `out` in one step, keeping
 * the newest `keep` versions. Returns the lines about leftovers of an
 * earlier, stopped run that were cleaned up. Throws `RangeError` for a
 * refused bundle (see `TrainedBundle.refused`).
 */
export async function writeTrainedBundle(
  out: string,
  trained: TrainedBundle,
  keep: number,
): Promise<string[]> {
  if (trained.refused) {
    throw new RangeError(
      `A refused bundle is not written: ${trained.uncalibrated}`,
    );
  }
  return await writeBundleVersioned(
    out,
    await encodeBundle(trainedContents(trained.result)),
    keep,
  );
}

/**
 * The training options a bundle was trained with, read back from what it
 * records (the manifest's `training` settings, the featurizer and table
 * settings, and whether its report shows a second tier stage), so a
 * retrain can make the same choices on new traces. Settings an older
 * bundle does not record are left out (they take their defaults); the
 * options that are not the bundle's to say (workers, progress) are absent.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadBundle } from "../bundle/mod.ts";
 * import { trainOptionsOf } from "./train_bundle.ts";
 * const options = trainOptionsOf(await loadBundle("demo/bundle"));
 * assert.equal(options.alpha, 0.05);
 * assert.equal(options.semantic, "off");
 * ```
 */
export function trainOptionsOf(table: Table): TrainOptionsInput {
  const info = bundleInfo(table);
  const t = info.training ?? info.report?.training ?? {};
  const stages = info.report?.questions ?? [];
  return {
    seed: t.seed,
    alpha: t.alpha,
    delta: t.delta,
    split: t.split,
    similarity: t.similarity,
    scopeScore: t.scope_score,
    calibrationShare: t.shares?.calibration,
    testShare: t.shares?.test,
    validationShare: t.shares?.validation,
    learningRate: t.learning_rate,
    wordDropout: t.word_dropout,
    minGradient: t.min_gradient,
    candidates: t.candidates,
    ensemble: t.ensemble,
    maxEpochs: t.max_epochs,
    patience: t.patience,
    visitBudget: t.visit_budget,
    refitBelow: t.refit_below,
    l2Grid: t.l2_grid === undefined ? undefined : [...t.l2_grid],
    kindScales: t.kind_scales,
    featurizer: table.featurizer,
    settings: {
      min_radius: table.settings.min_radius,
      serve_new_options: table.settings.serve_new_options,
      force_thresholds: table.settings.force_thresholds,
      drift: table.settings.drift,
    },
    semantic: stages.some((q) => q.semantic !== undefined) ? "auto" : "off",
  };
}
