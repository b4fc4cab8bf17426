/**
 * The HTML report of `train --report-html`: per question, the frontier and
 * option table measured on the calibration split (where the threshold is
 * chosen), why its answers were not certified, the advice for an
 * uncalibrated question, and the split and leakage check.
 *
 * @module
 */

import { assess, prepareText, QUIET_GUARD, TableState } from "../engine/mod.ts";
import type { TrainResult } from "../train/mod.ts";
import type { TraceSet } from "../traces/mod.ts";
import { frontierOf, QuestionTally } from "../eval/mod.ts";
import {
  type ReportModel,
  type ReportQuestion,
  statusInWords,
} from "./report_html.ts";
import { leakageInWords, testInWords, ZERO_THRESHOLD } from "./report_words.ts";
import {
  type CalibrationOutcome,
  inScopeConfidences,
  type ScoredAnswers,
  splitInWords,
  type TrainOptions,
} from "../train/mod.ts";
import { whyNotCertified } from "./eval_words.ts";
import { percent } from "../format.ts";

/** What calibration decided per question, as `TrainOptions.onCalibration` tells it. */
export type CalibrationRecord = Map<
  string,
  { scored: ScoredAnswers; outcome: CalibrationOutcome }
>;

/** A `TrainOptions.onCalibration` that keeps what it hears in `record`. */
export function recordCalibration(
  record: CalibrationRecord,
): NonNullable<TrainOptions["onCalibration"]> {
  return (question, scored, outcome) =>
    record.set(question, { scored, outcome });
}

/** The report model of one training run. */
export function trainReportModel(
  result: TrainResult,
  traces: TraceSet,
  record: CalibrationRecord,
  options: TrainOptions,
  outcome: string,
): ReportModel {
  const { table, report } = result;
  const questions: ReportQuestion[] = report.questions.map((q) => {
    const recorded = record.get(q.name);
    const tq = table.byName.get(q.name)!;
    const qa = traces.questions.find((x) => x.name === q.name)!;
    let options_: ReportQuestion["options"] = null;
    let notCertified: ReportQuestion["notCertified"] = null;
    let averages: ReportQuestion["averages"] = null;
    let confusions: ReportQuestion["confusions"] = null;
    let frontier: ReportQuestion["frontier"] = [];
    if (recorded !== undefined) {
      const { scored, outcome: calibrated } = recorded;
      frontier = frontierOf(
        {
          total: scored.confidences.length,
          confidences: inScopeConfidences(
            scored,
            options.settings.drift.scope_p,
          ),
          wrong: scored.wrong,
          units: scored.units,
        },
        calibrated.plan.grid,
        calibrated.calibration.threshold,
        options.delta,
      );
      if (scored.traces !== undefined) {
        // The calibration answers as the trained table serves them.
        const tally = new QuestionTally(tq.options);
        const state = new TableState(table);
        for (const i of scored.traces) {
          const text = prepareText(table, state, traces.texts[i]!);
          const a = assess(table, state, text, q.name, {}, QUIET_GUARD);
          const expected = qa.options[qa.labels[i]!]!;
          tally.add(a, a, expected, tq.optionIndex.has(expected));
        }
        const counted = tally.result([], null, options.delta);
        options_ = counted.options;
        notCertified = whyNotCertified(counted);
        averages = counted.averages;
        confusions = counted.confusions;
      }
    }
    const t = q.test;
    return {
      name: q.name,
      summary: `held-out test: ${t.n} answers, ${
        percent(t.coverage, "none")
      } certified, ${
        t.disagreement === null
          ? "so no disagreement rate to measure"
          : `${percent(t.disagreement, "none")} disagreement (95% CI up to ${
            percent(t.disagreement_upper, "none")
          })`
      }, accuracy ${percent(t.accuracy, "none")} over all answers`,
      status: statusInWords(tq, true),
      alpha: report.alpha,
      options: options_,
      optionsOn:
        "the calibration split, answered by the trained table (its threshold was chosen on these answers)",
      averages,
      confusions,
      notCertified,
      frontier,
      frontierOn: tq.semantic === undefined
        ? "the calibration split, at the candidate thresholds the test could choose (answers of one cluster or group count together in the alpha column, as in the test)"
        : "the calibration split, the table alone at the candidate thresholds its own test could choose, its own threshold ringed (served, both tiers are certified at the two-tier threshold in the status line; eval --report-html draws both tiers' frontier)",
      advice: q.calibration.advice,
      leakage: leakageInWords(q.leakage),
      notes: [
        ...(q.thin_options.length === 0 ? [] : [
          `Options with fewer than 10 training answers: ${
            q.thin_options.map((o) => `${o.option} (${o.answers})`).join(", ")
          }.`,
        ]),
        ...(q.calibration.threshold === 0
          ? [`Threshold 0: ${ZERO_THRESHOLD}.`]
          : []),
        ...(q.semantic?.calibration === null || q.semantic === undefined
          ? []
          : [
            `Both tiers on the calibration split, at the two-tier threshold ${
              q.semantic.calibration.threshold?.toFixed(4) ?? "none"
            }: ${
              q.semantic.calibration.by_table +
              q.semantic.calibration.by_semantic
            } answers certified (${q.semantic.calibration.by_semantic} by the second tier).`,
          ]),
        ...[testInWords(t, report.alpha, report.delta)]
          .filter((line) => line !== null)
          .map((line) => `Held-out test: ${line}.`),
      ],
    };
  });
  return {
    title: "training report",
    about: [
      `${report.traces} traces, alpha ${report.alpha}, delta ${report.delta}, seed ${report.seed}.`,
      outcome,
      ...report.refused.map((r) => `Refused: ${r}.`),
    ],
    split: `Split: ${splitInWords(report.split)}.`,
    questions,
  };
}
