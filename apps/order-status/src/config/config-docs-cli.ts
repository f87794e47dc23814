/**
 * `npm run docs:config`: writes docs/configuration.md from the configuration code.
 * `-- --check` only compares, exiting 1 when the committed file is stale.
 */
// The configuration imports the contracts, whose DTO classes carry decorators.
import 'reflect-metadata';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describeConfig } from './app-config';
import { CONFIG_DOCS_PATH, renderConfigDocs } from './config-docs';

const path = resolve(__dirname, '../../../..', CONFIG_DOCS_PATH);
const rendered = renderConfigDocs(describeConfig());
if (process.argv.includes('--check')) {
  const committed = readFileSync(path, 'utf8');
  if (committed !== rendered) {
    process.stderr.write(`${CONFIG_DOCS_PATH} is stale: run npm run docs:config\n`);
    process.exitCode = 1;
  }
} else {
  writeFileSync(path, rendered);
  process.stdout.write(`wrote ${CONFIG_DOCS_PATH}\n`);
}
