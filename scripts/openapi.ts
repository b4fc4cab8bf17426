/**
 * Writes the service's OpenAPI document (built by `src/openapi/` from the
 * route table, served at `GET /v1/openapi.json`) to `docs/openapi.json`, the committed
 * copy a user generates a client from. Run it after changing a route or a
 * body; `tests/openapi_test.ts` fails while the committed copy differs.
 *
 * Usage: deno task openapi
 *
 * @module
 */

import { ROUTE_TABLE } from "../src/http/mod.ts";
import { openApiJson } from "../src/openapi/mod.ts";

/** Where the committed document lives. */
export const OPENAPI_FILE = new URL("../docs/openapi.json", import.meta.url);

if (import.meta.main) {
  // Written beside the target, then renamed: never a half-written document.
  const temp = new URL(`openapi.json.${crypto.randomUUID()}.tmp`, OPENAPI_FILE);
  try {
    await Deno.writeTextFile(temp, await openApiJson(ROUTE_TABLE));
    await Deno.rename(temp, OPENAPI_FILE);
  } catch (e) {
    await Deno.remove(temp).catch(() => {});
    console.error(
      `error: cannot write ${OPENAPI_FILE.pathname}: ${
        (e as Error).message.split("\n")[0]
      }`,
    );
    Deno.exit(2);
  }
  console.log(`wrote ${OPENAPI_FILE.pathname}`);
}
