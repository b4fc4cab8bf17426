/**
 * The featurise stage of training: the texts' features, the table's rows
 * (buckets seen in the train split) and the layout the fit step reads.
 *
 * @module
 */

import type { Table } from "../engine/mod.ts";
import { buildCorpus, tableRows, trainingLayout } from "./corpus.ts";
import type { FitTable } from "./fit.ts";
import type { TrainOptions } from "./options.ts";
import { isTrain, type Split } from "./split.ts";

/** What the featurise stage gives the next ones. */
export interface Featurised {
  /** The table with no question yet: featurizer, settings and rows. */
  base: Table;
  /** The rows as the fit step reads them. */
  fitTable: FitTable;
  /** Each row's hash bucket, as the bundle stores it. */
  rowBuckets: Int32Array;
  /** Each row's feature kind. */
  rowKinds: Uint8Array;
}

/**
 * Featurises `texts`; a row is a bucket some train-split text has, so
 * calibration and test texts see only what training saw.
 */
export function featuriseStage(
  texts: readonly string[],
  split: Split,
  options: Pick<TrainOptions, "featurizer" | "settings" | "kindScales">,
  say: (line: string) => void,
): Featurised {
  const corpus = buildCorpus(texts, options.featurizer, say);
  const { rowOf, rowBuckets, rowKinds } = tableRows(
    corpus,
    (i) => isTrain(split.parts[i]!),
    options.featurizer,
  );
  const layout = trainingLayout(
    corpus,
    rowOf,
    options.featurizer.ngram_average_min,
    options.kindScales,
  );
  const base: Table = {
    featurizer: options.featurizer,
    settings: options.settings,
    rowOf,
    rowCount: rowBuckets.length,
    questions: [],
    byName: new Map(),
    info: {},
  };
  return {
    base,
    fitTable: { layout, rows: rowBuckets.length, rowKinds },
    rowBuckets,
    rowKinds,
  };
}
