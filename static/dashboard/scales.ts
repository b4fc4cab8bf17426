/**
 * Where the charts put their axis ticks: pure functions of the data's range.
 *
 * @module
 */

/**
 * A log scale's range: from the power of ten at or below `min` to the one
 * at or above `max`, at least one decade wide.
 */
export function decadeRange(min: number, max: number): [number, number] {
  const d0 = Math.floor(Math.log10(min));
  let d1 = Math.ceil(Math.log10(max));
  if (d1 <= d0) d1 = d0 + 1;
  return [10 ** d0, 10 ** d1];
}

/**
 * Ticks of a log scale from `lo` to `hi` (powers of ten): each decade, and
 * 2 and 5 times it when the range spans two decades or fewer.
 */
export function decadeTicks(lo: number, hi: number): number[] {
  const d0 = Math.round(Math.log10(lo));
  const d1 = Math.round(Math.log10(hi));
  const steps = d1 - d0 <= 2 ? [1, 2, 5] : [1];
  const ticks: number[] = [];
  for (let d = d0; d <= d1; d++) {
    for (const m of steps) {
      const v = m * 10 ** d;
      if (v <= hi * (1 + 1e-9)) ticks.push(Number(v.toPrecision(12)));
    }
  }
  return ticks;
}

/**
 * Ticks of a time axis in seconds before now (`min` < 0 to `max` = 0):
 * multiples of a round step that leaves at most `count` intervals, always
 * including now.
 */
export function secondsTicks(
  min: number,
  max: number,
  count: number,
): number[] {
  const span = Math.max(1, max - min);
  const steps = [1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600];
  const step = steps.find((s) => span / s <= Math.max(1, count)) ?? 3600;
  const ticks: number[] = [];
  for (let v = Math.floor(max / step) * step; v >= min - 1e-9; v -= step) {
    ticks.unshift(v);
  }
  return ticks;
}
