import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTlsMaterial } from '../../apps/order-status/src/http/dev-certificate';
import { stablePort } from '../support/stable-port';
import { spawnService, type ServiceProcess } from './service-process';

/**
 * Preloaded into the service: on SIGUSR2 it writes the files the CommonJS loader loaded
 * (ioredis and selfsigned are CommonJS, so both are in require.cache once loaded) and
 * exits. Its own signal, handled from the first line: the service's SIGTERM handler is
 * installed only after the listening line.
 */
const PRELOAD = `process.on('SIGUSR2', () => {
  require('node:fs').writeFileSync(process.env.LOADED_MODULES_FILE, JSON.stringify(Object.keys(require.cache)));
  process.exit(0);
});\n`;

function loadedPackages(file: string): string[] {
  const files = JSON.parse(readFileSync(file, 'utf8')) as string[];
  return [
    ...new Set(files.flatMap((f) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(f)?.[1] ?? [])),
  ];
}

/**
 * Start-up loads what it uses and no more: ioredis only with Redis configured, selfsigned
 * only when the development certificate has to be made (together about 10 % of start-up CPU:
 * docs/runtime.md). Against the production build, so the lazily loaded code is proven to
 * be where the build put it.
 */
describe('modules loaded at start-up (production build)', () => {
  let dir: string;
  let preload: string;
  const services: ServiceProcess[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'order-status-start-up-'));
    preload = join(dir, 'record-loaded-modules.js');
    writeFileSync(preload, PRELOAD);
  });

  afterEach(async () => {
    for (const s of services.splice(0)) {
      s.kill();
      await s.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts the service and returns the packages it loaded until it listened. */
  async function packagesLoaded(env: Record<string, string>): Promise<string[]> {
    const file = join(dir, 'loaded-modules.json');
    const s = await spawnService({
      ...env,
      NODE_OPTIONS: `--require ${preload}`,
      LOADED_MODULES_FILE: file,
    });
    services.push(s);
    s.child.kill('SIGUSR2');
    expect(await s.exited).toBe(0);
    return loadedPackages(file);
  }

  it('neither ioredis nor selfsigned with the embedded store and a certificate in place', async () => {
    const certDir = join(dir, 'certs');
    await loadTlsMaterial({ devCertDir: certDir });
    const loaded = await packagesLoaded({ TLS_DEV_CERT_DIR: certDir });
    expect(loaded).toContain('@grpc/grpc-js'); // the record works
    expect(loaded).not.toContain('ioredis');
    expect(loaded).not.toContain('selfsigned');
  });

  it('both when Redis is configured and the certificate is still to be made', async () => {
    const certDir = join(dir, 'certs');
    const loaded = await packagesLoaded({
      TLS_DEV_CERT_DIR: certDir,
      // Nothing listens there: the service starts not ready, after the connect timeout.
      REDIS_URL: `redis://127.0.0.1:${await stablePort()}`,
      REDIS_CONNECT_TIMEOUT_MS: '100',
    });
    expect(loaded).toContain('ioredis');
    expect(loaded).toContain('selfsigned');
    expect(existsSync(join(certDir, 'dev-cert.pem'))).toBe(true);
  });
});
