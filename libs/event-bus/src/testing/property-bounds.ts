/**
 * Bounds for the asynchronous property specs. They detect hangs; they do not check speed.
 * A run of these properties takes about a millisecond on an idle core, but CI runs two
 * Jest processes (Node 20 and Node 26) on two shared cores beside the load-test smoke
 * test, and there a 200-run property once passed Jest's 5 s default (reproduced with 40
 * busy loops on the spec's core). So the whole test gets a generous bound, and each run
 * its own smaller one: a run that really hangs then fails as a fast-check counterexample
 * with the seed and path that replay it, instead of as an anonymous Jest timeout. Not
 * exported from the library's index.
 */
export const PROPERTY_TEST_TIMEOUT_MS = 180_000;

/** fast-check parameters for every run of an asynchronous property. */
export function asyncPropertyRuns(numRuns?: number): { numRuns?: number; timeout: number } {
  return { ...(numRuns === undefined ? {} : { numRuns }), timeout: 10_000 };
}
