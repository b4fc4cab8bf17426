/**
 * Temperature scaling: one positive number that divides the logits so that
 * confidences match observed accuracy on held-out data.
 *
 * @module
 */

/** Mean negative log-likelihood of `labels` under `softmax(logits / t)`; logits are `n × k` row-major. */
export function meanNll(
  logits: Float64Array,
  labels: Int32Array,
  k: number,
  t: number,
): number {
  const n = labels.length;
  let total = 0;
  for (let i = 0; i < n; i++) {
    const base = i * k;
    let max = -Infinity;
    for (let j = 0; j < k; j++) max = Math.max(max, logits[base + j]! / t);
    let sum = 0;
    for (let j = 0; j < k; j++) sum += Math.exp(logits[base + j]! / t - max);
    total += Math.log(sum) + max - logits[base + labels[i]!]! / t;
  }
  return n === 0 ? 0 : total / n;
}

/** The temperature in [0.05, 20] minimising held-out NLL (golden-section search on log t). */
export function fitTemperature(
  logits: Float64Array,
  labels: Int32Array,
  k: number,
): number {
  if (labels.length === 0) return 1;
  let lo = Math.log(0.05);
  let hi = Math.log(20);
  const phi = (Math.sqrt(5) - 1) / 2;
  let a = hi - phi * (hi - lo);
  let b = lo + phi * (hi - lo);
  let fa = meanNll(logits, labels, k, Math.exp(a));
  let fb = meanNll(logits, labels, k, Math.exp(b));
  for (let iter = 0; iter < 40; iter++) {
    if (fa < fb) {
      hi = b;
      b = a;
      fb = fa;
      a = hi - phi * (hi - lo);
      fa = meanNll(logits, labels, k, Math.exp(a));
    } else {
      lo = a;
      a = b;
      fa = fb;
      b = lo + phi * (hi - lo);
      fb = meanNll(logits, labels, k, Math.exp(b));
    }
  }
  return Math.exp((lo + hi) / 2);
}
