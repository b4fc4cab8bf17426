/**
 * Readiness (`GET /v1/ready`): whether this process should be sent traffic
 * now, apart from `/v1/health`, which the interface fixes and which says
 * only that the process answers. A process is ready once its bundle is
 * loaded (the server listens only after that, so every process that
 * answers has one) and, with a live store (`serve --live-store`), once the
 * store has answered at least once: before that the replica withholds
 * every certification. A store lost later does not make it unready: the
 * replica keeps the fleet's threshold and moves only stricter, and every
 * replica would go out of rotation at once.
 *
 * @module
 */

import type { FleetLive } from "../live/mod.ts";
import type { ReadyDocument } from "../openapi/mod.ts";

/**
 * Whether a process serving bundle `bundleId` (with `fleet`, its live
 * store, or null) is ready, and why not (see the module doc).
 */
export function readiness(
  bundleId: string,
  fleet: FleetLive | null,
): ReadyDocument {
  if (fleet !== null) {
    const status = fleet.status();
    if (status.lastSyncAgoMs === null) {
      return {
        ready: false,
        bundle_id: bundleId,
        reason: `live store ${status.store} not reached yet (${status.link}${
          status.failures > 0
            ? `, ${status.failures} failed ${
              status.failures === 1 ? "try" : "tries"
            }`
            : ""
        }): certification is withheld until it answers`,
      };
    }
  }
  return { ready: true, bundle_id: bundleId };
}
