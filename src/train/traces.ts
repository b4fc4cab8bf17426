/**
 * The traces training consumes, where the trainer has always imported them
 * from; reading them lives in `src/traces/` (new code imports
 * `src/traces/mod.ts`).
 *
 * @module
 */

export type { QuestionAnswers, TraceSet } from "../traces/mod.ts";
export { parseCsvTraces, parseJsonlTraces } from "../traces/mod.ts";
