import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface TlsMaterial {
  readonly key: string;
  readonly cert: string;
  /** True when the certificate is the generated development one (clients must trust it explicitly). */
  readonly development: boolean;
}

const DEV_CERT = 'dev-cert.pem';
const DEV_KEY = 'dev-key.pem';
const DEV_CERT_DAYS = 365;

/**
 * The TLS key and certificate for the HTTPS (h2 + http/1.1) listener: the configured
 * files when given, else a self-signed development certificate for localhost, made once
 * and kept in `devCertDir` so browsers and curl see the same one across restarts.
 */
export async function loadTlsMaterial(opts: {
  certFile?: string;
  keyFile?: string;
  devCertDir: string;
}): Promise<TlsMaterial> {
  if (opts.certFile || opts.keyFile) {
    if (!opts.certFile || !opts.keyFile) {
      throw new Error('TLS_CERT_FILE and TLS_KEY_FILE must be set together');
    }
    const [cert, key] = await Promise.all([
      readFile(opts.certFile, 'utf8'),
      readFile(opts.keyFile, 'utf8'),
    ]);
    return { cert, key, development: false };
  }
  const certPath = join(opts.devCertDir, DEV_CERT);
  const keyPath = join(opts.devCertDir, DEV_KEY);
  try {
    const [cert, key] = await Promise.all([readFile(certPath, 'utf8'), readFile(keyPath, 'utf8')]);
    return { cert, key, development: true };
  } catch {
    // Not made yet: make it below.
  }
  // Loaded here, not at the top: selfsigned and its ASN.1 stack slow every start and are
  // needed once, on the first start without a certificate.
  const { generate } = await import('selfsigned');
  const notAfter = new Date(Date.now() + DEV_CERT_DAYS * 86_400_000);
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notAfterDate: notAfter,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  await mkdir(opts.devCertDir, { recursive: true });
  // Write-then-rename: parallel test workers may race to create the same files.
  const suffix = `.${process.pid}.tmp`;
  await writeFile(keyPath + suffix, pems.private, { mode: 0o600 });
  await writeFile(certPath + suffix, pems.cert);
  await rename(keyPath + suffix, keyPath);
  await rename(certPath + suffix, certPath);
  return { cert: pems.cert, key: pems.private, development: true };
}
