/**
 * The dashboard's built script and the page that inlines it: the committed
 * `static/dashboard.bundle.js` is what `deno task build:dashboard` makes of
 * `static/dashboard/`, and the page carries uPlot before its own script.
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  buildDashboard,
  DASHBOARD_BUNDLE,
} from "../scripts/build-dashboard.ts";
import { dashboardHtml } from "../static/mod.ts";

const VENDOR = new URL("../static/vendor/uplot/", import.meta.url);

Deno.test("static/dashboard.bundle.js is what build:dashboard makes of static/dashboard/", async () => {
  const committed = await Deno.readTextFile(DASHBOARD_BUNDLE);
  const built = await buildDashboard();
  assert.ok(
    committed === built,
    "static/dashboard.bundle.js is stale: run `deno task build:dashboard` and commit it",
  );
});

Deno.test("dashboardHtml inlines uPlot's stylesheet and script before the page's own", async () => {
  const uplotJs = await Deno.readTextFile(new URL("uPlot.iife.min.js", VENDOR));
  const uplotCss = await Deno.readTextFile(new URL("uPlot.min.css", VENDOR));
  const pageJs = await Deno.readTextFile(DASHBOARD_BUNDLE);
  const at = (part: string) => {
    const i = dashboardHtml.indexOf(part);
    assert.ok(i >= 0, `the page holds ${part.slice(0, 60)}…`);
    return i;
  };
  assert.ok(at(uplotCss) < at("--p50:"), "uPlot's styles come first");
  assert.ok(at(uplotJs) < at(pageJs), "uPlot is defined before it is used");
  assert.doesNotMatch(dashboardHtml, /__(UPLOT|DASHBOARD)_(CSS|JS)__/);
  // Nothing is fetched: no external script, stylesheet or source map.
  assert.doesNotMatch(dashboardHtml, /<script[^>]+src=|<link[^>]+stylesheet/);
  assert.doesNotMatch(pageJs, /sourceMappingURL/);
});

Deno.test("the vendored uPlot carries its licence and names its version", async () => {
  const licence = await Deno.readTextFile(new URL("LICENSE", VENDOR));
  assert.match(licence, /MIT License[\s\S]*Leon Sorokin/);
  const js = await Deno.readTextFile(new URL("uPlot.iife.min.js", VENDOR));
  const version = js.match(
    /^\/\*! https:\/\/github\.com\/leeoniya\/uPlot \(v([\d.]+)\) \*\//,
  )
    ?.[1];
  assert.ok(version, "the minified script starts with its banner");
  const readme = await Deno.readTextFile(new URL("README.md", VENDOR));
  assert.ok(
    readme.includes(`uplot@${version}`),
    `static/vendor/uplot/README.md names uplot@${version}`,
  );
});
