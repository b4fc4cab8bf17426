/**
 * The "Live certificate" card: per question, why its threshold is what it
 * is, in the server's words, and the audits waiting for an answer.
 *
 * @module
 */

import { byId, h } from "../dom.ts";
import { fmtDurationShort, fmtInt, fmtPct } from "../format.ts";
import type { Stats } from "../stats.ts";
import { stateBadge } from "./badge.ts";

/** The badge of each reason a threshold is in force. */
const LIVE_BADGES: Record<string, ["quiet" | "alarmed", string]> = {
  bundle: ["quiet", "● bundle's threshold"],
  live_lower: ["quiet", "▼ lowered by audits"],
  live_stricter: ["alarmed", "▲ raised by audits"],
  withdrawn: ["alarmed", "■ withdrawn"],
  uncalibrated: ["quiet", "○ uncalibrated"],
};

/** Fills the card from `st`. */
export function renderLive(st: Stats): void {
  const live = st.live;
  renderSuspect(st);
  renderIdless(st);
  const box = byId("live");
  if (!live) {
    box.replaceChildren(
      h("p", { class: "empty" }, "This server has no live certificate."),
    );
    return;
  }
  if (!live.enabled) {
    box.replaceChildren(
      h(
        "p",
        { class: "empty" },
        "Off: no certified answer is audited (serve --audit-rate 0).",
      ),
    );
    return;
  }
  const list = h("ul", { class: "rows cols" });
  for (const [name, q] of Object.entries(live.questions ?? {})) {
    const [kind, label] = LIVE_BADGES[q.reason] ?? ["quiet", q.reason];
    const check = q.feedback_check ?? null;
    const suspect = check?.status === "suspect";
    list.append(
      h(
        "li",
        {
          "data-live": name,
          "data-reason": q.reason,
          "data-feedback": check === null ? "unchecked" : check.status,
        },
        h(
          "div",
          { class: "row-head" },
          h("span", { class: "name" }, name),
          stateBadge(kind, label),
          ...(suspect ? [stateBadge("alarmed", "⚠ suspect feedback")] : []),
        ),
        // The summary names an alarm with its figures.
        h("p", { class: "row-note" }, q.summary),
        ...(check === null || suspect ? [] : [
          h("p", { class: "muted small" }, `Feedback check: ${check.summary}.`),
        ]),
      ),
    );
  }
  const resets = live.resets;
  const lastReset = resets?.last.at(-1);
  box.replaceChildren(
    list,
    h(
      "p",
      { class: "muted small" },
      `Audits ${fmtPct(live.audit_rate)} of certified answers · ${
        fmtInt(live.pending_audits)
      } waiting for the model's answer (at most ${
        fmtInt(live.pending_capacity)
      }, for ${fmtDurationShort(live.audit_ttl_s)}) · ${
        fmtInt(live.audits_dropped)
      } dropped unanswered.${
        resets === undefined || lastReset === undefined
          ? ""
          : ` Live evidence reset ${fmtInt(resets.total)} time${
            resets.total === 1 ? "" : "s"
          }, last at ${new Date(lastReset.at).toLocaleString()} (${
            lastReset.question ?? "every question"
          }).`
      }`,
    ),
  );
}

/**
 * The banner at the top when the feedback check of a question alarmed: it
 * names the questions and what each alarm means for the answers served.
 */
function renderSuspect(st: Stats): void {
  const suspect = Object.entries(st.live?.questions ?? {}).filter(([, q]) =>
    q.feedback_check?.status === "suspect"
  );
  const banner = byId("feedback-banner");
  banner.hidden = suspect.length === 0;
  if (suspect.length === 0) return;
  const words = suspect.map(([name, q]) => {
    const c = q.feedback_check!;
    return c.disagrees_too_much
      ? `${name}: the model's answers disagree with the table far more than calibration allows (a proxy that lies, or a model that changed); the disagreements count, so certification moves stricter and may be withdrawn`
      : `${name}: the model's answers agree with the table far more than calibration allows (a proxy that echoes the table); the threshold in force stays the bundle's or stricter`;
  });
  byId("feedback-banner-text").textContent = `${
    words.join(". ")
  }. Withholding is the safe side. Check what sends POST /v1/feedback, then reset the live evidence (POST /v1/live/reset).`;
}

/**
 * The banner when feedback comes without the ids its decisions carried:
 * how many items, and what it costs the next calibration.
 */
function renderIdless(st: Stats): void {
  const idless = st.live?.feedback_without_ids;
  const banner = byId("idless-banner");
  banner.hidden = idless === undefined || idless.items === 0;
  if (idless === undefined || idless.items === 0) return;
  byId("idless-banner-text").textContent = `${
    fmtInt(idless.items)
  } feedback items came without the feedback_id their answer carried. A label without its id is not known to answer the decision it picked to calibrate, so each picked one (about ${
    fmtInt(Math.max(1, Math.round(idless.picks_expected)))
  } so far) counts as a disagreement where the next bundle would certify it, and it certifies less. Send back the feedback_id (or audit) of each answer with the model's answer.`;
}
