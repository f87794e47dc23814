import { join } from 'node:path';

/** Where the committed OpenAPI document lives (from the TypeScript sources). */
export const OPENAPI_FILE = join(__dirname, '..', '..', '..', '..', 'docs', 'openapi.json');
