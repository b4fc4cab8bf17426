/**
 * The "Share answered, per question" card: each question's certified
 * share, its calibration and why its other answers went to the model.
 *
 * @module
 */

import { byId, h, widthOf } from "../dom.ts";
import {
  calibrationInWords,
  fmtClock,
  fmtInt,
  fmtPct,
  isNum,
} from "../format.ts";
import type { Stats } from "../stats.ts";

/** " · to model: low_confidence 20, drift 1", most frequent first; "" when none. */
export function flagsInWords(
  flags: Record<string, number> | undefined,
): string {
  const list = Object.entries(flags ?? {}).filter(([, n]) => n > 0);
  if (!list.length) return "";
  list.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return ` · to model: ${list.map(([f, n]) => `${f} ${fmtInt(n)}`).join(", ")}`;
}

/** Fills the card from `st`. */
export function renderQuestions(st: Stats): void {
  const questions = st.bundle?.questions ?? [];
  const list = h("ul", { class: "rows" });
  for (const q of questions) {
    const pq = st.per_question?.[q.name] ??
      { answers: 0, certified: 0, share_answered: null };
    const share = pq.share_answered;
    const kind = q.kind === "yes_no"
      ? "yes/no"
      : `choice of ${q.options.length}`;
    const calibration = calibrationInWords(q);
    list.append(
      h(
        "li",
        { "data-question": q.name },
        h(
          "div",
          { class: "row-head" },
          h(
            "span",
            { class: "name" },
            q.name,
            " ",
            h("span", { class: "muted small" }, kind),
          ),
          h("span", { class: "value" }, fmtPct(share)),
        ),
        h(
          "div",
          {
            class: "bar",
            role: "meter",
            "aria-label": `${q.name}: share certified`,
            "aria-valuemin": 0,
            "aria-valuemax": 100,
            "aria-valuenow": isNum(share) ? (share * 100).toFixed(1) : 0,
          },
          h("span", { style: widthOf(isNum(share) ? share : 0) }),
        ),
        h(
          "p",
          { class: "row-note" },
          pq.answers
            ? `${fmtInt(pq.certified)} of ${
              fmtInt(pq.answers)
            } certified · ${calibration}${flagsInWords(pq.flags)}`
            : (st.reloads?.count ?? 0) > 0 && st.bundle?.loaded_at
            ? `no answers since this bundle began serving at ${
              fmtClock(st.bundle.loaded_at)
            } · ${calibration}`
            : `no answers yet · ${calibration}`,
        ),
      ),
    );
  }
  byId("questions").replaceChildren(
    questions.length
      ? list
      : h("p", { class: "empty" }, "The bundle lists no questions."),
  );
}
