/**
 * Latency is recorded for at most this many subscribers of a run; every subscriber still
 * counts its seqs (loss, duplicates, order stay exact). 500 subscribers at 10 ev/s give
 * 5,000 samples a second, plenty for a p99.9, while reading the clock and updating the
 * histogram for every event of 5,000 subscribers was a measurable share of the
 * generator's core.
 */
export const LATENCY_SAMPLE_MAX = 500;

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/**
 * Every `stride`-th subscriber is sampled. Subscriber i follows order i mod `orders`, so
 * the stride is made coprime with the order count: a common factor would sample only
 * some of the orders (stride 2 over 10 orders: only the odd ones).
 */
export function latencySampleStride(subscribers: number, orders: number): number {
  let stride = Math.max(1, Math.ceil(subscribers / LATENCY_SAMPLE_MAX));
  while (orders > 1 && gcd(stride, orders) !== 1) stride += 1;
  return stride;
}
