import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'undici';
import { OrderStatus } from '@app/order-domain';
import { spawnService, type ServiceProcess } from '../../ops/service-process';
import { bearer } from '../../support/auth';
import { TEST_CERT_DIR } from '../../support/test-app';

/** Publishes in flight at once while flooding an order (bounded, like every loop here). */
const PUBLISH_CONCURRENCY = 4;
/** Publishes are not what these tests limit: the per-principal publish rate must not interfere. */
const UNLIMITED_PUBLISH_RATE = '1000000';

/**
 * The built service as its own process (`npm run build` first): a client that crashes
 * the process must fail the test, not take Jest's worker down with it. Its stderr is
 * kept so a test can say why the process died.
 */
export interface HostileService {
  readonly proc: ServiceProcess;
  readonly httpUrl: string;
  readonly httpsUrl: string;
  readonly grpcAddress: string;
  readonly httpsPort: number;
  readonly httpPort: number;
  /** The development certificate the TLS port presents (CN localhost). */
  readonly ca: string;
  /** Every stderr line since start-up (an uncaught exception's stack lands here). */
  readonly stderr: string[];
  /** Throws, naming the exit code and the end of stderr, if the process is gone. */
  assertAlive(): void;
  /**
   * Publishes `count` events for `orderId`, returns the last seq: order events (`created`
   * first if `create`), or payloads of `bytes` when the service runs STREAM_DOMAIN=payload.
   */
  publish(orderId: string, count: number, opts?: PublishOptions): Promise<number>;
  /** SIGTERM, then resolves with the exit code and how long the process took to go. */
  sigterm(): Promise<{ readonly code: number | string; readonly tookMs: number }>;
  /** SIGKILL if still running, and waits for the exit (afterEach/afterAll). */
  kill(): Promise<void>;
}

export interface PublishOptions {
  /** Publish `created` first (the order does not exist yet; a payload stream needs none). */
  readonly create?: boolean;
  /** The payload of each event, on a service in the payload domain. @default 0 */
  readonly bytes?: number;
}

export async function startHostileService(env: Record<string, string>): Promise<HostileService> {
  const proc = await spawnService({
    LIMIT_PUBLISH_PER_WINDOW: UNLIMITED_PUBLISH_RATE,
    ...env,
  });
  const stderr: string[] = [];
  proc.child.stderr?.setEncoding('utf8');
  proc.child.stderr?.on('data', (chunk: string) => stderr.push(...chunk.split('\n')));
  const listening = proc.lines.find((l) => l.includes('"listening"')) ?? '{}';
  const ports = JSON.parse(listening) as { http: number; https: number };
  const httpsUrl = `https://127.0.0.1:${ports.https}`;
  const pool = new Pool(proc.httpUrl, { connections: PUBLISH_CONCURRENCY });
  const exitedAs = (): string | undefined => {
    const { exitCode, signalCode } = proc.child;
    if (exitCode === null && signalCode === null) return undefined;
    return String(exitCode ?? signalCode);
  };

  const shipped = new Set<string>();
  const payloads = env.STREAM_DOMAIN === 'payload';
  /** A status change (`status`), with `'tracking'` a tracking update, or a payload. */
  const publishOne = async (
    orderId: string,
    status: OrderStatus | 'tracking' | 'payload',
    bytes = 0,
  ) => {
    const [route, fields] =
      status === 'payload'
        ? [`/v1/streams/${orderId}/payload`, { bytes }]
        : status === 'tracking'
          ? [
              `/v1/orders/${orderId}/tracking`,
              { location: { lat: 52.5, lon: 13.4 }, etaMs: 1_900_000_000_000 },
            ]
          : [`/v1/orders/${orderId}/status`, { status }];
    const res = await pool.request({
      method: 'POST',
      path: route,
      headers: { ...bearer(), 'content-type': 'application/json' },
      body: JSON.stringify(fields),
    });
    const body = (await res.body.json()) as { seq?: number };
    if (res.statusCode !== 201 || body.seq === undefined) {
      throw new Error(`publish ${orderId} answered ${res.statusCode}: ${JSON.stringify(body)}`);
    }
    return body.seq;
  };

  return {
    proc,
    httpUrl: proc.httpUrl,
    httpsUrl,
    grpcAddress: proc.grpcAddress,
    httpsPort: ports.https,
    httpPort: Number(new URL(proc.httpUrl).port),
    ca: readFileSync(join(TEST_CERT_DIR, 'dev-cert.pem'), 'utf8'),
    stderr,
    assertAlive: () => {
      const code = exitedAs();
      if (code === undefined) return;
      const tail = stderr.filter((l) => l.trim() !== '').slice(-15);
      throw new Error(`the service process died (exit ${code}); stderr:\n${tail.join('\n')}`);
    },
    publish: async (orderId, count, opts = {}) => {
      let last = 0;
      let left = count;
      // A payload stream takes any number of payloads, its first creates it. An order: a
      // status may not repeat, tracking updates may: the order ships once, then a stream
      // of tracking updates makes one busy order.
      if (!payloads && opts.create) {
        last = await publishOne(orderId, OrderStatus.Created);
        left -= 1;
      }
      if (!payloads && left > 0 && !shipped.has(orderId)) {
        shipped.add(orderId);
        last = await publishOne(orderId, OrderStatus.Shipped);
        left -= 1;
      }
      const worker = async () => {
        while (left > 0) {
          left -= 1;
          const event = payloads ? 'payload' : 'tracking';
          last = Math.max(last, await publishOne(orderId, event, opts.bytes));
        }
      };
      await Promise.all(Array.from({ length: PUBLISH_CONCURRENCY }, worker));
      return last;
    },
    sigterm: async () => {
      const at = performance.now();
      proc.child.kill('SIGTERM');
      const code = await proc.exited;
      return { code, tookMs: performance.now() - at };
    },
    kill: async () => {
      await pool.destroy();
      proc.kill();
      await proc.exited;
    },
  };
}

/** The `connections left` count of the service's drain log line, if it logged one. */
export function connectionsLeftAtDrain(service: HostileService): number | undefined {
  const line = service.proc.lines.find((l) => l.includes('drained in'));
  const match = line !== undefined ? /(\d+) connections left/.exec(line) : null;
  return match ? Number(match[1]) : undefined;
}
