import { createPrivateKey, randomBytes, X509Certificate } from 'node:crypto';
import { access, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
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
 * and kept in `devCertDir` so browsers and curl see the same one across restarts (made
 * again when it expires, or when its key is not its own).
 */
export async function loadTlsMaterial(opts: {
  certFile?: string;
  keyFile?: string;
  devCertDir: string;
  /** How long a key without its certificate is waited for (tests). @default 10 s */
  abandonedAfterMs?: number;
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
  const paths = {
    cert: join(opts.devCertDir, DEV_CERT),
    key: join(opts.devCertDir, DEV_KEY),
  };
  const abandonedAfterMs = opts.abandonedAfterMs ?? ABANDONED_AFTER_MS;
  for (;;) {
    const made = await readMade(paths);
    if (made && usable(made)) return made;
    if (made) {
      // Torn (an earlier version's race) or expired: a new pair, made as if there were none.
      await rm(paths.cert, { force: true });
      await rm(paths.key, { force: true });
    }
    // The key is the claim: created exclusively, so of starters racing (two instances on one
    // volume, two test runs in one checkout) one writes the pair and the others read it.
    // A key already there is another starter's claim: no pair is made only to be dropped.
    const pems = (await exists(paths.key)) ? undefined : await makeCertificate();
    await mkdir(opts.devCertDir, { recursive: true });
    if (pems && (await claim(paths.key, pems.private))) {
      // Renamed into place last: a certificate on disk means its key is there, whole.
      const tmp = `${paths.cert}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
      await writeFile(tmp, pems.cert);
      await rename(tmp, paths.cert);
      return { cert: pems.cert, key: pems.private, development: true };
    }
    const theirs = await waitForCertificate(paths, abandonedAfterMs);
    if (theirs) return theirs;
    // A key whose certificate never came: its starter died between the two writes.
    await rm(paths.key, { force: true });
  }
}

/**
 * How long a key may wait for its certificate before it counts as left by a starter that
 * died; the writer renames the certificate right after the key, so seconds are plenty.
 */
const ABANDONED_AFTER_MS = 10_000;
const POLL_MS = 25;

interface Paths {
  readonly cert: string;
  readonly key: string;
}

/** The pair on disk, or undefined while its certificate is not there. */
async function readMade(paths: Paths): Promise<TlsMaterial | undefined> {
  try {
    // The certificate first: once it is there, so is its key.
    const cert = await readFile(paths.cert, 'utf8');
    return { cert, key: await readFile(paths.key, 'utf8'), development: true };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Whether the key is the certificate's (nginx and Node refuse to start with a pair that is
 * not) and the certificate is valid for at least another day.
 */
function usable(m: TlsMaterial): boolean {
  try {
    const cert = new X509Certificate(m.cert);
    return (
      cert.checkPrivateKey(createPrivateKey(m.key)) &&
      Date.parse(cert.validTo) > Date.now() + 86_400_000
    );
  } catch {
    return false; // not PEM at all: made again like a torn pair
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** Creates `path` with `content` unless it exists (another starter claimed it first). */
async function claim(path: string, content: string): Promise<boolean> {
  try {
    await writeFile(path, content, { flag: 'wx', mode: 0o600 });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

async function waitForCertificate(
  paths: Paths,
  timeoutMs: number,
): Promise<TlsMaterial | undefined> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const made = await readMade(paths);
    if (made || performance.now() >= deadline) return made;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

async function makeCertificate(): Promise<{ cert: string; private: string }> {
  // Loaded here, not at the top: selfsigned and its ASN.1 stack slow every start and are
  // needed once, on the first start without a certificate.
  const { generate } = await import('selfsigned');
  const notAfter = new Date(Date.now() + DEV_CERT_DAYS * 86_400_000);
  return generate([{ name: 'commonName', value: 'localhost' }], {
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
}
