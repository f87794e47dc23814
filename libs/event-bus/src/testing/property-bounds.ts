/**
 * Bounds for the asynchronous property specs. They detect hangs; they do not check speed,
 * and CI shares its cores between two Jest processes and the load-test smoke test. So the
 * whole test gets a generous bound, and each run
 * its own smaller one: a run that really hangs then fails as a fast-check counterexample
 * with the seed and path that replay it, instead of as an anonymous Jest timeout. Not
 * exported from the library's index.
 */
export const PROPERTY_TEST_TIMEOUT_MS = 180_000;

/** fast-check parameters for every run of an asynchronous property. */
export function asyncPropertyRuns(numRuns?: number): { numRuns?: number; timeout: number } {
  return { ...(numRuns === undefined ? {} : { numRuns }), timeout: 10_000 };
}
