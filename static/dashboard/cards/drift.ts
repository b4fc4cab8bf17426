/**
 * The "Drift guard" card: per question, quiet or alarmed, since when, and
 * its evidence against the alarm level.
 *
 * @module
 */

import { byId, h, widthOf } from "../dom.ts";
import {
  fmtAgo,
  fmtClock,
  fmtEvidence,
  fmtInt,
  isNum,
  plural,
} from "../format.ts";
import type { DriftSummary, Stats } from "../stats.ts";
import { stateBadge } from "./badge.ts";

/**
 * Where `evidence` stands between 1 and `level`, from 0 to 1, on a log
 * scale: the evidence is a test martingale, which grows by factors.
 */
function evidenceShare(evidence: number, level: number): number {
  return Math.min(
    1,
    Math.max(0, Math.log(Math.max(evidence, 1)) / Math.log(level)),
  );
}

function driftRow(name: string, d: DriftSummary): HTMLLIElement {
  const alarmed = d.status === "alarmed";
  const level = isNum(d.alarm_level) && d.alarm_level > 1 ? d.alarm_level : 100;
  const evidence = isNum(d.evidence) ? d.evidence : 0;
  const since = d.since
    ? ` since ${fmtClock(d.since)} (${fmtAgo(d.since)})`
    : "";
  const note = alarmed
    ? `Certification withheld${since}. Raised at request ${
      fmtInt(d.alarmed_at)
    }.`
    : `${fmtInt(d.observed)} requests watched${since}.`;
  return h(
    "li",
    { "data-drift": name, "data-status": d.status },
    h(
      "div",
      { class: "row-head" },
      h("span", { class: "name" }, name),
      alarmed
        ? stateBadge("alarmed", "▲ alarmed")
        : stateBadge("quiet", "● quiet"),
    ),
    h(
      "div",
      {
        class: `bar evidence${alarmed ? " alarmed" : ""}`,
        role: "meter",
        "aria-label": `${name}: evidence of drift, ${
          fmtEvidence(evidence)
        } of alarm level ${level}`,
        "aria-valuemin": 1,
        "aria-valuemax": level,
        "aria-valuenow": Math.min(level, Math.max(1, evidence)).toFixed(2),
      },
      h("span", { style: widthOf(evidenceShare(evidence, level)) }),
    ),
    h(
      "p",
      { class: "row-note" },
      `Evidence ${fmtEvidence(evidence)} of ${
        fmtInt(level)
      } to alarm · ${note} ${plural(d.alarms, "alarm")}, ${
        fmtInt(d.clears)
      } cleared.`,
    ),
  );
}

/** Fills the card from `st`. */
export function renderDrift(st: Stats): void {
  const drift = Object.entries(st.drift ?? {});
  const box = byId("drift");
  if (!drift.length) {
    box.replaceChildren(
      h("p", { class: "empty" }, "This bundle has no drift guard."),
    );
    return;
  }
  box.replaceChildren(
    h("ul", { class: "rows cols" }, drift.map(([n, d]) => driftRow(n, d))),
  );
}
