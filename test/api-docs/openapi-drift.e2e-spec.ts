import { readFileSync } from 'node:fs';
import {
  exportOpenApiDocument,
  serializeOpenApiDocument,
} from '../../apps/order-status/src/openapi/document-app';
import { OPENAPI_FILE } from '../../apps/order-status/src/openapi/openapi-file';

describe('docs/openapi.json', () => {
  it('is what the controllers produce (run `npm run openapi` after changing a route)', async () => {
    const produced = serializeOpenApiDocument(await exportOpenApiDocument());
    const committed = readFileSync(OPENAPI_FILE, 'utf8');
    // Parsed first: a failure then shows which route or schema differs.
    expect(JSON.parse(committed)).toEqual(JSON.parse(produced));
    expect(committed).toBe(produced);
  });
});
