/**
 * `npm run openapi`: writes docs/openapi.json from the controllers' decorators (the same
 * document `/docs` serves). `npm run openapi -- --check` only compares, and exits 1 when
 * the committed file differs (the jest suite runs the same comparison).
 */
import 'reflect-metadata';
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { exportOpenApiDocument, serializeOpenApiDocument } from './document-app';
import { OPENAPI_FILE } from './openapi-file';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { check: { type: 'boolean', default: false } } });
  const text = serializeOpenApiDocument(await exportOpenApiDocument());
  if (!values.check) {
    writeFileSync(OPENAPI_FILE, text);
    process.stdout.write(`wrote ${OPENAPI_FILE}\n`);
    return;
  }
  let committed = '';
  try {
    committed = readFileSync(OPENAPI_FILE, 'utf8');
  } catch {
    // A missing file is drift too.
  }
  if (committed !== text) {
    process.stderr.write(`${OPENAPI_FILE} is out of date: run npm run openapi\n`);
    process.exitCode = 1;
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
