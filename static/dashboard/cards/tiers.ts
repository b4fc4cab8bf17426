/**
 * The "Tiers" card, shown only while a bundle with a second tier is
 * served: per tier the answers, the certified share and the decision
 * latency; for the second tier also how often it was asked, withheld by
 * its novelty guard, shed at a full queue or failed, and its queue now.
 *
 * @module
 */

import { byId, h } from "../dom.ts";
import { fmtInt, fmtLatency, fmtPct } from "../format.ts";
import type { Stats } from "../stats.ts";

/** Fills the card from `st`; hides it without a second tier. */
export function renderTiers(st: Stats): void {
  const card = byId("card-tiers");
  const t = st.tiers;
  card.hidden = t === undefined;
  if (t === undefined) return;
  const row = (
    key: string,
    name: string,
    c: typeof t.table,
    extra: string,
  ) =>
    h(
      "li",
      { "data-tier": key },
      h(
        "div",
        { class: "row-head" },
        h("span", { class: "name" }, name),
        h(
          "span",
          { class: "num" },
          `${fmtInt(c.certified)} of ${fmtInt(c.answers)} certified (${
            fmtPct(c.share_answered)
          })`,
        ),
      ),
      h(
        "p",
        { class: "sub" },
        `latency p50 ${fmtLatency(c.latency_us.p50)}, p99 ${
          fmtLatency(c.latency_us.p99)
        }${extra}`,
      ),
    );
  const s = t.semantic;
  byId("tiers").replaceChildren(
    h(
      "ul",
      { class: "rows" },
      row("table", "Table", t.table, ""),
      row(
        "semantic",
        "Second tier (sentence encoder)",
        s,
        ` · asked ${fmtInt(s.asked)}, novel ${fmtInt(s.novel)}, shed ${
          fmtInt(s.shed)
        }, failed ${fmtInt(s.failed)} · queue ${fmtInt(t.in_flight)} of ${
          fmtInt(t.queue)
        } on ${fmtInt(t.workers)} workers`,
      ),
    ),
  );
}
