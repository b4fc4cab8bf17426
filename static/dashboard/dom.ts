/**
 * Small DOM helpers. Everything that comes from the server is inserted as
 * text, never as HTML.
 *
 * @module
 */

/** An attribute value; null, undefined and false leave the attribute out, true sets it empty. */
export type Attr = string | number | boolean | null | undefined;

/** A child of `h()`: a node, text, nothing, or a list of those. */
export type Child = Node | string | number | null | undefined | false | Child[];

/**
 * The element with id `id`, checked to be an instance of `type`; throws a
 * `TypeError` when the page lacks it, so a renamed id fails loudly.
 */
export function byId<T extends HTMLElement = HTMLElement>(
  id: string,
  type?: new () => T,
): T {
  const el = document.getElementById(id);
  if (el === null || !(el instanceof (type ?? HTMLElement))) {
    throw new TypeError(`The dashboard page has no ${type?.name ?? ""} #${id}`);
  }
  return el as T;
}

/**
 * Creates an element with attributes (`class`, `style` and any other) and
 * children; strings and numbers become text nodes.
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Record<string, Attr> | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

function append(el: Element, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

/** Sets the text of `#id`, touching the DOM only when it changes. */
export function setText(id: string, text: string): void {
  const el = byId(id);
  if (el.textContent !== text) el.textContent = text;
}

/** A bar of `share` (0 to 1) of its track's width, as an inline style. */
export function widthOf(share: number): string {
  return `width:${(Math.min(1, Math.max(0, share)) * 100).toFixed(2)}%`;
}
