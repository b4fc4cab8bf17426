/**
 * The live dashboard served at `GET /`, as one self-contained HTML document.
 *
 * The page, its stylesheet, its script (built from `static/dashboard/` by
 * `deno task build:dashboard`) and the chart library it draws with (uPlot,
 * vendored in `static/vendor/uplot/`) are imported as text, so
 * `deno compile` embeds them and the server reads no file to serve the page.
 * The stylesheets and scripts are inlined into the HTML once, at module load.
 * The page polls `GET /v1/stats` and posts to `/v1/playground`, both on the
 * same origin, and needs nothing from the network.
 *
 * @example Serve it
 * ```ts
 * import { dashboardHtml } from "./static/mod.ts";
 *
 * Deno.serve(() =>
 *   new Response(dashboardHtml, {
 *     headers: { "content-type": "text/html; charset=utf-8" },
 *   })
 * );
 * ```
 *
 * @module
 */

import page from "./dashboard.html" with { type: "text" };
import css from "./dashboard.css" with { type: "text" };
import js from "./dashboard.bundle.js" with { type: "text" };
import uplotCss from "./vendor/uplot/uPlot.min.css" with { type: "text" };
import uplotJs from "./vendor/uplot/uPlot.iife.min.js" with { type: "text" };

/** Replaces the one placeholder `marker` of `html` with `content`, verbatim. */
function inline(html: string, marker: string, content: string): string {
  const at = html.indexOf(marker);
  if (at < 0 || html.indexOf(marker, at + marker.length) >= 0) {
    throw new SyntaxError(
      `Dashboard template must hold "${marker}" exactly once`,
    );
  }
  return html.slice(0, at) + content + html.slice(at + marker.length);
}

/** Throws when `content` would end its `<tag>` element early. */
function assertInlinable(content: string, tag: string): string {
  if (content.toLowerCase().includes(`</${tag}`)) {
    throw new SyntaxError(`Dashboard ${tag} must not contain "</${tag}"`);
  }
  return content;
}

/** Each placeholder of the page and what replaces it: uPlot's before the page's own. */
const PARTS: [marker: string, content: string][] = [
  ["/*__UPLOT_CSS__*/", assertInlinable(uplotCss, "style")],
  ["/*__DASHBOARD_CSS__*/", assertInlinable(css, "style")],
  ["//__UPLOT_JS__", assertInlinable(uplotJs, "script")],
  ["//__DASHBOARD_JS__", assertInlinable(js, "script")],
];

/**
 * The dashboard page: HTML with its CSS and JavaScript inline, ready to
 * send with `content-type: text/html; charset=utf-8`.
 */
export const dashboardHtml: string = PARTS.reduce(
  (html, [marker, content]) => inline(html, marker, content),
  page,
);
