import { readFileSync } from 'node:fs';
import type { RunResult } from '../scenarios/result';
import { comparisonTable, serverComparisons } from './comparison';
import type { Report } from './report-data';

/**
 * Prints the service / bare Node / Nchan comparison of one or more results.json files
 * (rounds run as separate invocations are merged):
 * `npx tsx loadtest/src/report/compare-cli.ts out/a/results.json out/b/results.json`.
 */
function main(paths: readonly string[]): void {
  const runs: RunResult[] = paths.flatMap(
    (p) => (JSON.parse(readFileSync(p, 'utf8')) as Report).runs,
  );
  process.stdout.write(`${comparisonTable(serverComparisons(runs)).join('\n')}\n`);
}

main(process.argv.slice(2));
