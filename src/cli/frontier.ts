/**
 * The coverage frontier, now in `src/eval/frontier.ts`; re-exported here
 * for importers of its old place.
 *
 * @module
 */

export * from "../eval/frontier.ts";
