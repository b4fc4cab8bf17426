/**
 * Badges: a colour always paired with a symbol and a word.
 *
 * @module
 */

import { h } from "../dom.ts";

/** "✓ certified" or "↪ to model". */
export function verdictBadge(certified: boolean): HTMLSpanElement {
  return certified
    ? h("span", { class: "badge certified" }, "✓ certified")
    : h("span", { class: "badge deferred" }, "↪ to model");
}

/** A badge of kind `quiet` or `alarmed` with its label. */
export function stateBadge(
  kind: "quiet" | "alarmed",
  label: string,
): HTMLSpanElement {
  return h("span", { class: `badge ${kind}` }, label);
}
