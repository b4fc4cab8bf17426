/**
 * What `serve --learn DIR` says when it starts: that it is learning, what
 * it found in its folder (the labels, the retrains, the bundle in force
 * and what that bundle certifies, or that there is none yet) and when the
 * next retrain comes. A restart says what it resumed from, so nobody reads
 * a service that picked up where it stopped as one that starts afresh.
 *
 * @module
 */

import type { Table } from "../engine/mod.ts";
import { type LearnerResume, MAX_RATE, THIN_RATE } from "../learn/mod.ts";
import { bundleIdOf, shownBundleId } from "../live/mod.ts";
import { bundleInfo, questionReportOf } from "../train/mod.ts";
import { percent } from "../format.ts";

/** The count with thousands separated: 12,345. */
const count = (n: number) => n.toLocaleString("en-US");

/**
 * The banner's first lines for a learning service in `dir` serving
 * `table` (the bundle found, or none), with what `resume` found on disk,
 * the labels at which the next retrain is due, and the bundle folder.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { learnBanner } from "./learn_banner.ts";
 * import { tableWithoutQuestions } from "../engine/mod.ts";
 * const lines = learnBanner("learn-dir", tableWithoutQuestions(), undefined, 300, 0);
 * assert.match(lines[0]!, /learning in learn-dir: no bundle yet/);
 * assert.doesNotMatch(lines.join("\n"), /000000000000/);
 * ```
 */
export function learnBanner(
  dir: string,
  table: Table,
  resume: LearnerResume | undefined,
  nextAt: number,
  loadMs: number,
): string[] {
  const labels = Math.max(resume?.labels ?? 0, resume?.lastLabels ?? 0);
  const found = resume === undefined || (labels === 0 && resume.retrains === 0)
    ? "a new folder"
    : `${count(labels)} labels, ${count(resume.retrains)} ${
      resume.retrains === 1 ? "retrain" : "retrains"
    } (${count(resume.swaps)} swapped in)`;
  if (table.questions.length === 0) {
    return [
      `learning in ${dir}: no bundle yet (${found}); every answer is uncertified, so the proxy asks its model for each and sends the answer back, until a retrain calibrates a bundle (the ${
        (resume?.retrains ?? 0) === 0 ? "first" : "next"
      } at ${count(nextAt)} labels)`,
    ];
  }
  const info = bundleInfo(table);
  const certifying = table.questions.map((q) => {
    const r = questionReportOf(info, q.name);
    const test = r?.test;
    const share = test === undefined || test.n === 0
      ? null
      : test.certified / test.n;
    return q.calibration.threshold === null &&
        (q.semantic?.calibration.threshold ?? null) === null
      ? `${q.name} uncalibrated`
      : `${q.name} ${
        share === null ? "calibrated" : `${percent(share)} of its test part`
      }`;
  }).join(", ");
  return [
    `learning in ${dir}: ${found}; bundle ${
      shownBundleId(bundleIdOf(table))
    } (loaded in ${
      loadMs.toFixed(1)
    } ms) certifying ${certifying}; next retrain at ${count(nextAt)} labels`,
  ];
}

/**
 * The banner's line on a learning service's calibration coin with base
 * rate `base` (`--audit-rate`): the rates it applies, never only the base.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { coinLine } from "./learn_banner.ts";
 * assert.match(coinLine(0.02), /10\.0% while the bundle has no calibration evidence/);
 * ```
 */
export function coinLine(base: number): string {
  return `calibration coin: each decision is picked at its question's rate, whatever its verdict: ${
    percent(Math.max(base, THIN_RATE))
  } while the bundle has no calibration evidence for it, then what one more calibration answer is worth (at most ${
    percent(Math.max(base, MAX_RATE))
  }, at least ${percent(base)}); ${
    percent(base)
  } for a question the bundle lacks. A picked certified answer is an audit of the live certificate, a picked uncertified one calibrates the next bundle (the rates in force: /v1/stats, live.rates)`;
}
