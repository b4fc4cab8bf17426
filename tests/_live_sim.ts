/**
 * The world the fleet simulations draw from: confidences uniform on
 * [0.5, 1], the live grid over them, the bundle's threshold, and a
 * disagreement rate rising toward low confidence; and what a simulated run
 * reports.
 *
 * @module
 */

export const ALPHA = 0.05;
/** Candidates at certified shares 5%, 10%, ..., 100% of confidences uniform on [0.5, 1]. */
export const GRID = Array.from(
  { length: 20 },
  (_, i) => 1 - 0.5 * (i + 1) / 20,
);
export const BUNDLE_THRESHOLD = GRID[11]!; // 60% certified

/** Disagreement `a ((1 - c) / 0.5)^1.5` at confidence c: the rate among answers above t is `a/2.5 share(t)^1.5`. */
export function world(rateAtBundle: number) {
  const share = (t: number) => Math.min(1, Math.max(0, (1 - t) / 0.5));
  const a = rateAtBundle * 2.5 / Math.pow(share(BUNDLE_THRESHOLD), 1.5);
  return {
    error: (c: number) => a * Math.pow((1 - c) / 0.5, 1.5),
    risk: (t: number) => (a / 2.5) * Math.pow(share(t), 1.5),
  };
}

/** A world of `world`. */
export type World = ReturnType<typeof world>;

/** What one simulated run of a fleet shows. */
export interface SimResult {
  /** True risk at the threshold each replica applied, at every check. */
  everAbove: boolean;
  /** A threshold more lenient than the bundle's ever applied with risk above alpha. */
  loosenedAbove: boolean;
  refuted: boolean;
  finalThresholds: (number | null)[];
  finalRisk: number;
}
