import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isTerminalStatus, type OrderStatus } from '@app/order-domain';
import { openSseH1, type SseStream } from '../support/sse-stream';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

const ROOT = join(__dirname, '..', '..');
/** The documented service address, replaced by the test service's. */
const DOCUMENTED_HTTP = 'http://127.0.0.1:3000';

/** Every plain-HTTP path of `order-1` that README.md and docs/clients.md tell users to curl. */
function documentedOrderPaths(): string[] {
  const paths = ['README.md', 'docs/clients.md'].flatMap((file) =>
    [...readFileSync(join(ROOT, file), 'utf8').matchAll(/^curl .*$/gm)].flatMap(([line]) => {
      const url = /(http:\/\/127\.0\.0\.1:3000)(\/v1\/orders\/order-1\b[^\s'"]*)/.exec(line);
      return url && url[1] === DOCUMENTED_HTTP ? [url[2]] : [];
    }),
  );
  return [...new Set(paths)];
}

/**
 * The README's `order-1` commands answer at any time, not only in the first minutes: the
 * simulator runs at 20 times its demo speed until every other order it started with has
 * finished and been replaced by new ids, then the documented commands are run.
 */
describe("README's order-1 commands after the simulator has cycled", () => {
  let app: TestApp;
  let sse: SseStream | undefined;

  beforeAll(async () => {
    app = await startTestApp({
      SIMULATOR_ENABLED: 'true',
      SIMULATOR_ORDERS: '5',
      SIMULATOR_RATE: '5',
      SIMULATOR_SPEED: '20',
    });
  });

  afterAll(async () => {
    sse?.close();
    await app.close();
  });

  it('answer with order-1 still moving', async () => {
    const paths = documentedOrderPaths();
    expect(paths).toContain('/v1/orders/order-1/stream');
    const url = (path: string) => `${app.httpUrl}${path}`;
    // Cycled: order-2 ... order-5 finished (a life cycle lasts ~2.5 s at this speed).
    await waitFor(
      async () => {
        const res = await fetch(url('/v1/admin/simulator'), { headers: app.authHeaders });
        const { activeOrderIds } = (await res.json()) as { activeOrderIds: string[] };
        return activeOrderIds.every((id) => id === 'order-1' || Number(id.split('-')[1]) > 5);
      },
      'every simulated order but the long-lived ones replaced',
      20_000,
      100,
    );
    for (const path of paths.filter((p) => !p.endsWith('/stream'))) {
      const res = await fetch(url(path), { headers: app.authHeaders });
      expect([path, res.status]).toEqual([path, 200]);
      await res.arrayBuffer();
    }
    const snapshot = (await (
      await fetch(url('/v1/orders/order-1'), { headers: app.authHeaders })
    ).json()) as { status: OrderStatus; lastSeq: number };
    expect(isTerminalStatus(snapshot.status)).toBe(false);
    // The stream delivers what happens next, not only what is retained.
    sse = await openSseH1(url('/v1/orders/order-1/stream'));
    expect(sse.status).toBe(200);
    await sse.waitFor(
      () => (sse?.events() ?? []).some((e) => e.seq > snapshot.lastSeq),
      'a live event of order-1',
      5_000,
    );
  });
});
