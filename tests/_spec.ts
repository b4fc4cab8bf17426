/**
 * The HTTP interface spec shared beside the project (`../shared/spec/`),
 * for tests that check names against it. It is never copied into the
 * project; tests skip with a printed reason when it is absent.
 *
 * @module
 */

const SPEC_DIR = new URL("../../shared/spec/", import.meta.url);

/** The spec's text, or null when `../shared/spec` holds no spec. */
export async function readSpec(): Promise<string | null> {
  try {
    for await (const entry of Deno.readDir(SPEC_DIR)) {
      if (entry.isFile && entry.name.endsWith(".txt")) {
        return await Deno.readTextFile(new URL(entry.name, SPEC_DIR));
      }
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return null;
}
