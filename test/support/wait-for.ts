/**
 * Polls `check` until it returns a truthy value, or fails after `timeoutMs` with
 * `message`. Used instead of sleeps: tests wait for the condition, with a bound.
 */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  message: string,
  timeoutMs = 5_000,
  intervalMs = 10,
): Promise<NonNullable<T>> {
  // The monotonic clock: a wall clock stepped while waiting must not end the wait early.
  const deadline = performance.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await check();
    if (last) return last;
    if (performance.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms: ${message}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Resolves with the first emission of `event`, or rejects after `timeoutMs`. */
export function once<T = unknown>(
  target: { once(event: string, cb: (v: T) => void): unknown },
  event: string,
  timeoutMs = 5_000,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`timed out waiting for '${event}'`)),
      timeoutMs,
    );
    target.once(event, (v: T) => {
      clearTimeout(timer);
      resolve(v);
    });
  });
}

/**
 * What `promise` settles with, or `fallback` once `timeoutMs` passed first; the timer is
 * cleared either way, so a settled race holds nothing open.
 */
export async function within<T, F>(
  promise: Promise<T>,
  timeoutMs: number,
  fallback: F,
): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<F>((resolve) => {
        timer = setTimeout(() => resolve(fallback), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
