import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { publicDir } from './demo-page';

describe('demo page assets', () => {
  it('vendors the socket.io client bundle of the installed socket.io-client (no CDN, no drift)', () => {
    const vendored = readFileSync(join(publicDir(), 'vendor', 'socket.io.min.js'));
    // The package's exports map hides dist/; resolve the package root instead.
    const pkgDir = join(require.resolve('socket.io-client/package.json'), '..');
    const installed = readFileSync(join(pkgDir, 'dist', 'socket.io.min.js'));
    // After upgrading socket.io-client: cp node_modules/socket.io-client/dist/socket.io.min.js
    // apps/order-status/public/vendor/
    expect(vendored.equals(installed)).toBe(true);
  });
});
