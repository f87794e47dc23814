/**
 * `npm run domain:new -- <name>`: adds a domain beside the order domain from the template
 * (a two-phase life cycle and its publish route), served with STREAM_DOMAIN=<name>.
 */
import { resolve } from 'node:path';
import { addDomain } from './new-domain';

const root = resolve(__dirname, '../../../..');
const name = process.argv[2] ?? '';
addDomain(root, name).then(
  (files) => {
    process.stdout.write(`${files.map((f) => `  ${f}`).join('\n')}\n`);
    process.stdout.write(
      `domain ${name} added; next: npm run docs:config, then STREAM_DOMAIN=${name} npm start\n`,
    );
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
