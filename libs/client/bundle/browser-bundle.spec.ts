import { readFileSync } from 'node:fs';
import { BROWSER_BUNDLE_PATH, buildBrowserBundle } from './browser-bundle';

describe('browser bundle of libs/client', () => {
  it('is committed as built from the current sources (npm run build:client)', async () => {
    const committed = readFileSync(BROWSER_BUNDLE_PATH, 'utf8');
    expect(committed === (await buildBrowserBundle())).toBe(true);
  });

  it('leaves gRPC and Node built-ins out', () => {
    const committed = readFileSync(BROWSER_BUNDLE_PATH, 'utf8');
    expect(committed).not.toMatch(/grpc-js|proto-loader|node:fs|require\("fs"\)/);
  });
});
