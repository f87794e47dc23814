import { readFileSync } from 'node:fs';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import {
  BROWSER_BUNDLE_PATH,
  BROWSER_MODULE_PATH,
  buildBrowserBundle,
  buildBrowserModule,
  SERVED_BUNDLE_PATHS,
} from './browser-bundle';

describe('browser builds of libs/client the service serves', () => {
  it.each([
    [BROWSER_BUNDLE_PATH, buildBrowserBundle],
    [BROWSER_MODULE_PATH, buildBrowserModule],
  ])(
    '%s is committed as built from the current sources (npm run build:client)',
    async (path, build) => {
      const committed = readFileSync(path, 'utf8');
      expect(committed === (await build())).toBe(true);
    },
  );

  it.each(SERVED_BUNDLE_PATHS)('%s leaves gRPC and Node built-ins out', (path) => {
    const committed = readFileSync(path, 'utf8');
    expect(committed).not.toMatch(/grpc-js|proto-loader|node:fs|require\("fs"\)/);
  });

  // The protobuf codecs (the domain's and the envelope's) serve gRPC alone: the default
  // domain of the browser entry is the order domain without them.
  it.each(SERVED_BUNDLE_PATHS)('%s leaves the protobuf codecs out', (path) => {
    const committed = readFileSync(path, 'utf8');
    expect(committed).not.toMatch(/unknown proto status|no event kind '/);
  });

  // Compared decompressed: compressed bytes may differ between zlib versions (Node 20, 26).
  it.each(SERVED_BUNDLE_PATHS)('%s.br and .gz hold exactly the committed file', (path) => {
    const committed = readFileSync(path);
    expect(brotliDecompressSync(readFileSync(`${path}.br`)).equals(committed)).toBe(true);
    expect(gunzipSync(readFileSync(`${path}.gz`)).equals(committed)).toBe(true);
  });
});
