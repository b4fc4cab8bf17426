/**
 * The "Why answers went to the model" card: deferrals counted by flag,
 * each flag explained in words an operator can act on.
 *
 * @module
 */

import { byId, h, widthOf } from "../dom.ts";
import { fmtInt, fmtPct } from "../format.ts";
import type { Stats } from "../stats.ts";

/** What each flag means. */
const FLAG_INFO: Record<string, string> = {
  low_confidence: "Confidence below the calibrated threshold.",
  drift:
    "Withheld by a rule about the text or the traffic (the out-of-scope rule, the novelty guard, the drift guard's alarm, or the live audits).",
  low_radius: "Exposed input that a few inserted words could flip.",
  uncalibrated:
    "The question has no calibrated threshold, so it is never certified.",
  unsupported: "A question the bundle does not know, or of type score.",
  empty_input: "Empty text; an empty message is never served.",
  options_changed: "The request offered an option the table never learned.",
  option_removed:
    "The best answer over all options was removed by the request.",
  new_options_served:
    "Served by configuration despite a new option; not certified.",
  manual_threshold: "Served by a forced threshold; not certified.",
};

/** The rule behind each answer flagged drift, as `eval` names it. */
const DRIFT_RULES: Record<string, string> = {
  out_of_scope: "the out-of-scope rule (a text asking for none of the options)",
  novelty: "the novelty guard (mostly words the table never saw)",
  alarm: "the drift guard's alarm (the stream drifted from calibration)",
  live_audit: "the live audits (certification withdrawn)",
};

/** Why answers flagged drift were withheld, naming each rule with its count. */
function driftWords(rules: Record<string, number> | undefined): string {
  const list = Object.entries(rules ?? {}).filter(([, n]) => n > 0);
  if (list.length === 0) return FLAG_INFO.drift!;
  list.sort((a, b) => b[1] - a[1]);
  return `Withheld by ${
    list.map(([r, n]) => `${DRIFT_RULES[r] ?? r}: ${fmtInt(n)}`).join("; ")
  }.`;
}

/** Fills the card from `st`. */
export function renderReasons(st: Stats): void {
  const reasons = Object.entries(st.deferral_reasons ?? {}).filter(([, n]) =>
    n > 0
  );
  reasons.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const total = reasons.reduce((sum, [, n]) => sum + n, 0);
  const box = byId("reasons");
  if (!reasons.length) {
    box.replaceChildren(
      h(
        "p",
        { class: "empty" },
        st.counts.answers
          ? "Every answer so far was certified: nothing went to the model."
          : "Nothing to explain yet: deferred answers and their reasons show here.",
      ),
    );
    return;
  }
  const list = h("ul", { class: "rows" });
  for (const [flag, n] of reasons) {
    list.append(
      h(
        "li",
        { "data-flag": flag },
        h(
          "div",
          { class: "row-head" },
          h("span", { class: "name flag" }, flag),
          h(
            "span",
            { class: "value" },
            `${fmtInt(n)} `,
            h("span", { class: "muted small" }, fmtPct(n / total, 0)),
          ),
        ),
        h(
          "div",
          { class: "bar deferral", "aria-hidden": "true" },
          h("span", { style: widthOf(n / total) }),
        ),
        h(
          "p",
          { class: "row-note" },
          flag === "drift" ? driftWords(st.drift_rules) : FLAG_INFO[flag] ?? "",
        ),
      ),
    );
  }
  box.replaceChildren(list);
}
