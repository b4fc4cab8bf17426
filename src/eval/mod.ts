/**
 * Evaluation of a bundle on traces, the way in from outside `src/eval/`:
 * `evaluate` and the figures it returns, by class and by tier.
 *
 * @module
 */

export { type Averages, type Confusion, type Prf } from "./class_report.ts";
export { evaluate, type TraceListener } from "./evaluate.ts";
export { type FrontierPoint } from "./frontier.ts";
export {
  type AveragesFigures,
  type EvalFigures,
  type OptionFigures,
} from "./tally.ts";
export { type TiersFigures } from "./tiers.ts";
export { QuestionTally } from "./tally.ts";
export { frontierOf } from "./frontier.ts";
