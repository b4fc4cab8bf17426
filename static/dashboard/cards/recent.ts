/**
 * The "Recent decisions" card: the newest decisions first, rows new since
 * the last refresh marked, texts only when the server keeps them.
 *
 * @module
 */

import { byId, h, setText } from "../dom.ts";
import { fmtAnswer, fmtClock, fmtConfidence, fmtRadius } from "../format.ts";
import type { RecentDecision, Stats } from "../stats.ts";
import { verdictBadge } from "./badge.ts";

/** Rows shown at most. */
const ROWS = 30;

const COLUMNS: [label: string, cls: string][] = [
  ["Time", ""],
  ["Route", ""],
  ["Question", ""],
  ["Answer", ""],
  ["Confidence", "num"],
  ["Verdict", ""],
  ["Flag", ""],
  ["Radius", "num"],
];

function cells(r: RecentDecision, keepText: boolean): HTMLTableCellElement[] {
  const row = [
    h("td", { class: "c-time time", title: r.at }, fmtClock(r.at)),
    h("td", { class: "c-route mono small" }, r.route ?? ""),
    h("td", { class: "c-q" }, r.question ?? ""),
    h("td", { class: "c-ans" }, fmtAnswer(r.answer)),
    h("td", { class: "c-conf num" }, fmtConfidence(r.confidence)),
    h("td", { class: "c-verdict" }, verdictBadge(!!r.certified)),
    h("td", { class: "c-flag flag" }, r.flag || "—"),
    h("td", {
      class: "c-radius num",
      title: r.radius === null
        ? "no number of inserted words can flip it"
        : null,
    }, fmtRadius(r.radius)),
    // Shown instead of time, route, flag and radius on narrow screens.
    h(
      "td",
      { class: "c-meta", "aria-hidden": "true" },
      [
        fmtClock(r.at),
        r.route ?? "",
        r.flag ?? "",
        `radius ${fmtRadius(r.radius)}`,
      ].filter(Boolean).join(" · "),
    ),
  ];
  if (keepText) {
    row.push(
      h(
        "td",
        { class: "c-text text" },
        typeof r.text === "string" ? r.text : "",
      ),
    );
  }
  return row;
}

/** The card; it remembers which rows it showed, to mark the new ones. */
export class RecentCard {
  #seen = new Set<string>();
  #first = true;

  /** Fills the card from `st`. */
  render(st: Stats): void {
    const keepText = !!st.keep_text;
    const shown = [...(st.recent ?? [])]
      .sort((a, b) => String(b.at).localeCompare(String(a.at)))
      .slice(0, ROWS);
    const table = byId("recent", HTMLTableElement);
    const columns = keepText ? [...COLUMNS, ["Text", ""]] : COLUMNS;
    const headKey = columns.map((c) => c[0]).join("|");
    if (table.dataset.head !== headKey) {
      table.tHead?.replaceChildren(
        h(
          "tr",
          null,
          columns.map(([label, cls]) =>
            h("th", { scope: "col", class: cls || null }, label)
          ),
        ),
      );
      table.dataset.head = headKey;
    }
    const seen = new Set<string>();
    const rows = shown.map((r) => {
      const key = `${r.at}|${r.route}|${r.question}`;
      seen.add(key);
      const fresh = !this.#first && !this.#seen.has(key);
      return h("tr", { class: fresh ? "fresh" : null }, cells(r, keepText));
    });
    table.tBodies[0]?.replaceChildren(...rows);
    this.#seen = seen;
    this.#first = false;
    byId("recent-empty").hidden = shown.length > 0;
    table.hidden = shown.length === 0;
    setText(
      "recent-note",
      shown.length
        ? `Newest first; ${shown.length} shown.${
          keepText
            ? ""
            : " Texts are not kept (start with --keep-text to see them)."
        } Radius: inserted words needed to flip the answer (∞: none can).`
        : "",
    );
    if (!shown.length) {
      setText(
        "recent-empty",
        "No decisions yet. Each answer the server gives appears here, newest first.",
      );
    }
  }
}
