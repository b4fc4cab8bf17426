/**
 * The readiness document's schema, `GET /v1/ready` (see `../ready.ts`).
 * Apart from the service's other schemas so that the app, which imports
 * only its type, loads no TypeBox.
 *
 * @module
 */

import { type Static, Type } from "@sinclair/typebox";

/** The readiness document, `GET /v1/ready` (200 when ready, 503 when not). */
export const ReadyDocument = Type.Object({
  ready: Type.Boolean(),
  bundle_id: Type.String({
    description: "The bundle loaded: its manifest's checksum (64 hex digits).",
  }),
  reason: Type.Optional(Type.String({
    description: "Why the process is not ready (only when ready is false).",
  })),
});

/** The readiness document. */
export type ReadyDocument = Static<typeof ReadyDocument>;
