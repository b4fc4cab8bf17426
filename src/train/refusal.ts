/**
 * The refusal rule of training: a bundle with an uncalibrated question
 * would never certify its answers, so training refuses to write it unless
 * asked to (`train --allow-uncalibrated`), and says in one line which
 * questions failed and what would help each.
 *
 * @module
 */

/**
 * What would help an uncalibrated question, in a few words, from the
 * trainer's advice: more traces (how many, as the learning curve's range
 * when there is one), a larger `--alpha` (which), or cleaner labels when
 * the curve says more of the same would not help. Null when the advice
 * names none of these.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { adviceInBrief } from "./refusal.ts";
 * assert.equal(
 *   adviceInBrief("...; a pass needs about 4,200 traces answering it in all (80% range 2,900-7,800), about 3,700 more (2,400-7,300), ...; at --alpha 0.075 this ..."),
 *   "about 2,400-7,300 more traces (learning curve), or --alpha 0.075",
 * );
 * ```
 */
export function adviceInBrief(advice: string): string | null {
  const helps: string[] = [];
  const range = /about [\d,]+ more \(([\d,]+)(-| to )((?:over )?[\d,]+)\)/
    .exec(advice);
  const over = /\(over ([\d,]+) more\)/.exec(advice)?.[1];
  const count = /about ([\d,]+) more traces answering it/.exec(advice)?.[1];
  if (/would not help/.test(advice)) {
    helps.push("cleaner labels (more of the same traces would not help)");
  } else if (range !== null) {
    helps.push(
      `about ${range[1]}${range[2]}${range[3]} more traces (learning curve)`,
    );
  } else if (over !== undefined) {
    helps.push(`over ${over} more traces (learning curve)`);
  } else if (count !== undefined) helps.push(`about ${count} more traces`);
  const alpha = /at --alpha ([\d.]+)/.exec(advice)?.[1];
  if (alpha !== undefined) helps.push(`--alpha ${alpha}`);
  return helps.length === 0 ? null : helps.join(", or ");
}

/** A training report's questions, as far as the summary reads them. */
interface ReportQuestions {
  alpha: number;
  delta: number;
  questions: readonly {
    name: string;
    calibration: { status: string; advice: string | null };
  }[];
}

/**
 * One line saying which questions are uncalibrated, why (no threshold
 * passed the test at the report's alpha and delta) and what would help each;
 * null when every question is calibrated.
 */
export function uncalibratedSummary(report: ReportQuestions): string | null {
  const failed = report.questions.filter((q) =>
    q.calibration.status !== "calibrated"
  );
  if (failed.length === 0) return null;
  const helps = failed.map((q) =>
    `${q.name}: ${
      adviceInBrief(q.calibration.advice ?? "") ??
        "see its warning above"
    }`
  );
  return `${failed.length} of ${report.questions.length} ${
    report.questions.length === 1 ? "question" : "questions"
  } uncalibrated, never certified (${
    failed.map((q) => q.name).join(", ")
  }: no threshold passed the test at alpha ${report.alpha}, delta ${report.delta}); what would help: ${
    helps.join("; ")
  }`;
}
