/**
 * Tests that need a program this machine may lack (node, promtool,
 * systemd-analyze) or the interface spec beside the project: why such a
 * test cannot run, for its `ignore:` (a skip is then counted as one), and
 * printed once so the reason shows in the test output.
 *
 * @module
 */

import { readSpec } from "./_spec.ts";

/**
 * Why `command` cannot run here (`command --version` failed to start), as
 * a printed line naming `file` and the package that brings it; null when it
 * runs.
 */
export function missingTool(
  file: string,
  command: string,
  install: string,
): string | null {
  try {
    new Deno.Command(command, {
      args: ["--version"],
      stdout: "null",
      stderr: "null",
    }).outputSync();
    return null;
  } catch {
    return skipped(file, `${command} is not installed (${install})`);
  }
}

/** The interface spec's text, or null (with a printed reason naming `file`) when it is absent. */
export async function specOrSkip(file: string): Promise<string | null> {
  const spec = await readSpec();
  if (spec === null) {
    skipped(file, "the interface spec in ../shared/spec is absent");
  }
  return spec;
}

/** Prints why tests of `file` are skipped; returns the reason. */
export function skipped(file: string, reason: string): string {
  console.log(`${file}: skipped, ${reason}`);
  return reason;
}

/** What `promtool check metrics` says of `metrics`: its exit code, and its stdout and stderr together. */
export async function promtoolCheck(
  metrics: string,
): Promise<{ code: number; report: string }> {
  const child = new Deno.Command("promtool", {
    args: ["check", "metrics"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(metrics));
  await writer.close();
  const out = await child.output();
  const report = new TextDecoder().decode(out.stdout) +
    new TextDecoder().decode(out.stderr);
  return { code: out.code, report };
}
