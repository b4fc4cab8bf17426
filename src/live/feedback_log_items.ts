/**
 * Which feedback items go to the feedback log (`serve --feedback-log`):
 * every item that reaches it (an answer naming an option the bundle lacks
 * is refused before, unless the server accepts new options) except one
 * whose audit id this process counted already: a replay, whose line was
 * written when it was first counted. An item is written counted or not:
 * what the reference model said about a text is a trace whatever its
 * audit id.
 *
 * @module
 */

import type { LiveController } from "./controller.ts";
import type { FeedbackItem } from "./feedback.ts";

/**
 * The items of a feedback request that the log gets (see the module doc),
 * judged before anything is counted, so a log that cannot be written
 * leaves nothing counted.
 */
export function loggableItems(
  live: LiveController,
  items: readonly FeedbackItem[],
): FeedbackItem[] {
  return items.filter((item) =>
    item.audit === undefined || !live.isReplay(item.audit)
  );
}
