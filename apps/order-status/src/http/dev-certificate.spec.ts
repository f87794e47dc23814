import { spawn } from 'node:child_process';
import { createPublicKey, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTlsMaterial, type TlsMaterial } from './dev-certificate';

/** The key's public half is the certificate's: nginx refuses a pair that is not. */
function expectPair(m: { key: string; cert: string }): void {
  const fromKey = createPublicKey(m.key).export({ type: 'spki', format: 'der' });
  const fromCert = new X509Certificate(m.cert).publicKey.export({ type: 'spki', format: 'der' });
  expect(fromKey.equals(fromCert)).toBe(true);
}

/** What is on disk in `dir`, as loadTlsMaterial names the files. */
function onDisk(dir: string): { key: string; cert: string } {
  return {
    key: readFileSync(join(dir, 'dev-key.pem'), 'utf8'),
    cert: readFileSync(join(dir, 'dev-cert.pem'), 'utf8'),
  };
}

describe('loadTlsMaterial: the development certificate', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'order-status-dev-cert-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is made once and read back the same on the next start', async () => {
    const first = await loadTlsMaterial({ devCertDir: dir });
    expect(first.development).toBe(true);
    expectPair(first);
    expect(onDisk(dir)).toEqual({ key: first.key, cert: first.cert });
    expect(await loadTlsMaterial({ devCertDir: dir })).toEqual(first);
  });

  // Two instances of the demo stack share one volume, and CI's two Jest runs one checkout:
  // every starter must end up with the certificate the others (and nginx) read.
  it('made by several starters at once, is one certificate that all of them return', async () => {
    const all = await Promise.all(
      Array.from({ length: 4 }, () => loadTlsMaterial({ devCertDir: dir })),
    );
    const disk = onDisk(dir);
    expectPair(disk);
    for (const m of all) expect({ key: m.key, cert: m.cert }).toEqual(disk);
  });

  it('made by several processes at once, is one certificate that all of them return', async () => {
    const script = join(dir, 'load.ts');
    writeFileSync(
      script,
      `import { loadTlsMaterial } from ${JSON.stringify(join(__dirname, 'dev-certificate'))};
loadTlsMaterial({ devCertDir: process.argv[2] }).then((m) => process.stdout.write(JSON.stringify(m)));`,
    );
    const certDir = join(dir, 'certs');
    const run = () =>
      new Promise<TlsMaterial>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', script, certDir], {
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
        child.on('error', reject);
        child.on('close', (code) =>
          code === 0 ? resolve(JSON.parse(out) as TlsMaterial) : reject(new Error(`exit ${code}`)),
        );
      });
    const all = await Promise.all(Array.from({ length: 3 }, run));
    const disk = onDisk(certDir);
    expectPair(disk);
    for (const m of all) expect({ key: m.key, cert: m.cert }).toEqual(disk);
  }, 60_000);

  // A pair torn by an earlier version's race (each file from another starter) made every
  // later start of that checkout fail: nginx and the service refuse a key that is not the
  // certificate's.
  it("a key that is not the certificate's is replaced by a new pair", async () => {
    const a = await loadTlsMaterial({ devCertDir: dir });
    const other = mkdtempSync(join(tmpdir(), 'order-status-dev-cert-'));
    try {
      const b = await loadTlsMaterial({ devCertDir: other });
      writeFileSync(join(dir, 'dev-key.pem'), b.key);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
    const healed = await loadTlsMaterial({ devCertDir: dir });
    expectPair(healed);
    expect(healed.cert).not.toBe(a.cert);
    expect(onDisk(dir)).toEqual({ key: healed.key, cert: healed.cert });
  });

  it('an expired certificate is replaced by a new pair', async () => {
    const { generate } = await import('selfsigned');
    const expired = await generate([{ name: 'commonName', value: 'localhost' }], {
      keyType: 'ec',
      curve: 'P-256',
      notBeforeDate: new Date(Date.now() - 3 * 86_400_000),
      notAfterDate: new Date(Date.now() - 86_400_000),
    });
    writeFileSync(join(dir, 'dev-key.pem'), expired.private);
    writeFileSync(join(dir, 'dev-cert.pem'), expired.cert);
    const renewed = await loadTlsMaterial({ devCertDir: dir });
    expectPair(renewed);
    expect(Date.parse(new X509Certificate(renewed.cert).validTo)).toBeGreaterThan(Date.now());
    expect(onDisk(dir)).toEqual({ key: renewed.key, cert: renewed.cert });
  });

  it('a key left without its certificate (a starter killed half way) is replaced', async () => {
    const made = await loadTlsMaterial({ devCertDir: dir });
    rmSync(join(dir, 'dev-cert.pem'));
    const again = await loadTlsMaterial({ devCertDir: dir, abandonedAfterMs: 0 });
    expectPair(again);
    expect(again.key).not.toBe(made.key);
    expect(onDisk(dir)).toEqual({ key: again.key, cert: again.cert });
  });
});
