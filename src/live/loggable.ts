/**
 * Which feedback items go to the feedback log (`serve --feedback-log`):
 * those that are valid traces. An item whose answer is not an option of
 * its question's table is not (training on it would add an option no one
 * offered); nor is one whose audit id this process counted already (a
 * replay: its line was written when it was counted). Every other item is
 * written, counted or not: what the reference model said about a text is
 * a trace whatever its audit id.
 *
 * @module
 */

import type { Table } from "../engine/table.ts";
import type { LiveController } from "./controller.ts";
import type { FeedbackItem } from "./feedback.ts";

/**
 * True when `item` is a valid trace for `table`: its answer is one of its
 * choice question's options, or a boolean for a yes/no question.
 */
export function isValidTrace(item: FeedbackItem, table: Table): boolean {
  const q = table.byName.get(item.question);
  if (q === undefined) return false;
  return q.kind === "yes_no"
    ? typeof item.answer === "boolean"
    : typeof item.answer === "string" && q.optionIndex.has(item.answer);
}

/**
 * The items of a feedback request that the log gets (see the module doc),
 * judged before anything is counted, so a log that cannot be written
 * leaves nothing counted.
 */
export function loggableItems(
  live: LiveController,
  table: Table,
  items: readonly FeedbackItem[],
): FeedbackItem[] {
  return items.filter((item) =>
    isValidTrace(item, table) &&
    (item.audit === undefined || !live.isReplay(item.audit))
  );
}
