import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { request } from 'undici';
import { OrderStatus } from '@app/order-domain/order-status';
import { demoBanner } from '../../apps/order-status/src/auth/demo-banner';
import { loadConfig } from '../../apps/order-status/src/config/app-config';
import { startTestApp, type TestApp } from '../support/test-app';

const ROOT = join(__dirname, '..', '..');
const CLI = join(ROOT, 'apps', 'watch-cli', 'src', 'grpc-cli.ts');
const TSX = join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
const run = promisify(execFile);

/** Demo mode: no key configured, so the public demo secret and the banner's token. */
const DEMO_ENV = { AUTH_HS256_SECRET: '', AUTH_JWKS_FILE: '', AUTH_ISSUER: '', AUTH_AUDIENCE: '' };

/** The words of a banner command after `npm run -s grpc --` (single quotes as in a shell). */
function grpcArgs(line: string): string[] {
  const tail = line.split('npm run -s grpc -- ')[1] ?? '';
  return [...tail.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]);
}

/**
 * `npm run grpc`, the gRPC calls of the docs without grpcurl: the start-up banner's
 * Subscribe command runs as printed, and reflection's list and the health check answer.
 */
describe('gRPC CLI (npm run grpc)', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp(DEMO_ENV);
    await app.createOrder(
      'order-1',
      OrderStatus.Paid,
      OrderStatus.Packed,
      OrderStatus.Shipped,
      OrderStatus.OutForDelivery,
      OrderStatus.Delivered,
    );
  });
  afterAll(() => app.close());

  const grpc = (args: string[], env: Record<string, string> = {}) =>
    run(process.execPath, [TSX, CLI, ...args], {
      cwd: ROOT,
      env: { ...process.env, GRPC_PORT: String(app.ports.grpc), ...env },
      timeout: 20_000,
    });

  it("runs the banner's Subscribe as printed", async () => {
    const banner = await demoBanner(loadConfig(DEMO_ENV), app.httpUrl, app.grpcAddress);
    const token = /export TOKEN=(\S+)/.exec(banner.join('\n'))?.[1];
    const line = banner.find((l) => l.includes('npm run -s grpc -- '));
    expect(line).toContain('ORDER_STATUS_TOKEN=$TOKEN');
    const { stdout } = await grpc(grpcArgs(line ?? ''), { ORDER_STATUS_TOKEN: token ?? '' });
    const messages = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(messages.map((m) => (m.event as { seq?: number } | undefined)?.seq)).toEqual(
      expect.arrayContaining([1, 2, 3, 4, 5, 6]),
    );
  }, 30_000);

  it('lists the services by reflection and checks health', async () => {
    const list = await grpc(['list']);
    expect(list.stdout.split('\n')).toEqual(
      expect.arrayContaining(['orderstatus.v1.OrderStatusService', 'grpc.health.v1.Health']),
    );
    const health = await grpc(['health', 'orderstatus.v1.OrderStatusService']);
    expect(JSON.parse(health.stdout)).toEqual({ status: 'SERVING' });
  }, 30_000);

  it("calls the payload domain's snapshot call on a service that carries it", async () => {
    const payload = await startTestApp({ STREAM_DOMAIN: 'payload' });
    try {
      const res = await request(`${payload.httpUrl}/v1/streams/grpc-p/payload`, {
        method: 'POST',
        headers: { ...payload.authHeaders, 'content-type': 'application/json' },
        body: JSON.stringify({ bytes: 8 }),
      });
      await res.body.dump();
      expect(res.statusCode).toBe(201);
      const { stdout } = await run(
        process.execPath,
        [TSX, CLI, '--url', payload.grpcAddress, 'GetPayloadStream', '{"order_id":"grpc-p"}'],
        {
          cwd: ROOT,
          env: { ...process.env, ORDER_STATUS_TOKEN: payload.defaultToken },
          timeout: 20_000,
        },
      );
      expect(JSON.parse(stdout)).toMatchObject({ order_id: 'grpc-p', last_seq: 1 });
    } finally {
      await payload.close();
    }
  }, 30_000);

  it('says which call failed and why, with exit code 1', async () => {
    await expect(grpc(['GetOrder', '{"order_id":"order-1"}'])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining(`${app.grpcAddress}: UNAUTHENTICATED`) as string,
    });
  }, 30_000);
});
