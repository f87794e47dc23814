import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeConfig } from '../../apps/order-status/src/config/app-config';

const DOCS = join(__dirname, '..', '..', 'docs');

/** The API documents send readers to settings by name: each must be a real variable. */
describe('configuration variables named in docs/openapi.json and docs/asyncapi.yaml', () => {
  it.each(['openapi.json', 'asyncapi.yaml'])(
    '%s names only variables the service reads',
    (file) => {
      const known = new Set(describeConfig().map((v) => v.name));
      const named = new Set(
        readFileSync(join(DOCS, file), 'utf8').match(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g),
      );
      expect(named.size).toBeGreaterThan(0);
      expect([...named].filter((name) => !known.has(name))).toEqual([]);
    },
  );
});
