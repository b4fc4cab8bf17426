/**
 * Builds the dashboard's script: bundles `static/dashboard/main.ts` and the
 * modules it imports (TypeScript, type-checked by `deno task check`) into
 * one browser script, `static/dashboard.bundle.js`, which `static/mod.ts`
 * inlines into the page after the vendored uPlot. The built file is
 * committed, so a clone serves the dashboard without building;
 * `tests/dashboard_build_test.ts` fails while it differs from what this
 * script makes of the sources.
 *
 * Bundling is `deno bundle` (esbuild, which Deno fetches from npm on its
 * first use and caches like any npm package).
 *
 * Usage: deno task build:dashboard
 *
 * @module
 */

const ROOT = new URL("../", import.meta.url);

/** The page script's entry module, relative to the project's root. */
export const DASHBOARD_ENTRY = "static/dashboard/main.ts";

/** The committed built script. */
export const DASHBOARD_BUNDLE = new URL(
  "static/dashboard.bundle.js",
  ROOT,
);

const HEADER = `// The dashboard's script, built from static/dashboard/*.ts by
// \`deno task build:dashboard\`. Edit those files and rebuild; do not edit this one.
`;

/**
 * The built script for the sources as they are now: `deno bundle` of
 * `DASHBOARD_ENTRY` as one self-contained function for the browser, under
 * a header naming its sources. Throws an `Error` with `deno bundle`'s
 * message when bundling fails.
 */
export async function buildDashboard(): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "bundle",
      "--quiet",
      "--platform",
      "browser",
      "--format",
      "iife",
      DASHBOARD_ENTRY,
    ],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(
      `deno bundle ${DASHBOARD_ENTRY} failed:\n${
        new TextDecoder().decode(out.stderr)
      }`,
    );
  }
  return HEADER + new TextDecoder().decode(out.stdout);
}

if (import.meta.main) {
  let built: string;
  try {
    built = await buildDashboard();
  } catch (e) {
    console.error(`error: ${(e as Error).message}`);
    Deno.exit(1);
  }
  // Written beside the target, then renamed: never a half-written script.
  const temp = new URL(
    `dashboard.bundle.js.${crypto.randomUUID()}.tmp`,
    DASHBOARD_BUNDLE,
  );
  try {
    await Deno.writeTextFile(temp, built);
    await Deno.rename(temp, DASHBOARD_BUNDLE);
  } catch (e) {
    await Deno.remove(temp).catch(() => {});
    console.error(
      `error: cannot write ${DASHBOARD_BUNDLE.pathname}: ${
        (e as Error).message.split("\n")[0]
      }`,
    );
    Deno.exit(2);
  }
  console.log(
    `wrote ${DASHBOARD_BUNDLE.pathname} (${
      built.length.toLocaleString("en")
    } characters)`,
  );
}
