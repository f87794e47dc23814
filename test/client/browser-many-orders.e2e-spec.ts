import type { Page } from 'playwright-core';
import { OrderStatus } from '@app/order-domain/order-status';
import type { OrderWatch } from '@app/client';
import { launchBrowser, type Browser } from '../browser/browser';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { countTimers, type PageGlobals } from './browser-watch';
import { TcpGate } from '../support/tcp-gate';

const ORDERS = 100;

type ManyGlobals = PageGlobals & { many: { watches: OrderWatch[]; close(): void } };

/** The page's JavaScript heap after a full collection, through the DevTools protocol. */
async function heapUsed(page: Page): Promise<number> {
  const cdp = await page.context().newCDPSession(page);
  try {
    await cdp.send('HeapProfiler.collectGarbage');
    return (await cdp.send('Runtime.getHeapUsage')).usedSize;
  } finally {
    await cdp.detach();
  }
}

/**
 * A page that follows 100 orders with one `createClient` over socket.io: one
 * connection on the service (counted by a relay in front of it), every order's events, and the
 * heap those 100 watches cost the page (reported, the figure in the library's README).
 */
describe(`${ORDERS} orders in one Chromium page`, () => {
  let browser: Browser;
  let app: TestApp;
  /** The service's HTTP port behind a relay that counts the connections it is given. */
  let gate: TcpGate;
  beforeAll(async () => {
    [browser, app] = await Promise.all([launchBrowser(), startTestApp()]);
    gate = await TcpGate.listen(app.ports.http);
  });
  afterAll(async () => {
    await browser.close();
    await gate.close();
    await app.close();
  });

  it('share one socket.io connection', async () => {
    const ids = Array.from({ length: ORDERS }, (_, i) => `page-${i}`);
    await Promise.all(ids.map((id) => app.publish(id, OrderStatus.Created)));
    // The demo page, loaded through the relay: the page's origin is the relay's.
    const page = await browser.context.newPage();
    await page.addInitScript(countTimers);
    await page.goto(`http://127.0.0.1:${gate.port}/`);
    await page.waitForFunction(() => 'OrderStatusClient' in globalThis, undefined, {
      timeout: 10_000,
      polling: 50,
    });
    // The page's own loads (document, scripts, the demo's stream) keep their connections.
    const before = gate.connections;
    const heapBefore = await heapUsed(page);
    await page.evaluate(
      ({ ids, token }) => {
        const g = globalThis as unknown as ManyGlobals;
        const baseUrl = (globalThis as unknown as { location: { origin: string } }).location.origin;
        const client = g.OrderStatusClient.createClient({ transport: 'ws', baseUrl, token });
        const watches = ids.map((id) => client.watch(id));
        for (const w of watches)
          void (async () => {
            for await (const item of w) void item;
          })();
        g.many = { watches, close: () => client.close() };
      },
      { ids, token: app.defaultToken },
    );
    const delivered = () =>
      page.evaluate(
        () =>
          (globalThis as unknown as ManyGlobals).many.watches.filter((w) => w.cursor >= 1).length,
      );
    await waitFor(async () => (await delivered()) === ORDERS, 'every order delivered', 20_000, 50);
    await app.publish(ids[42], OrderStatus.Paid);
    await waitFor(
      () =>
        page.evaluate(() => (globalThis as unknown as ManyGlobals).many.watches[42].cursor === 2),
      'live event delivered',
    );
    const during = gate.connections;
    const heapDuring = await heapUsed(page);
    console.log(
      `${ORDERS} watches (socket.io, one client) in one page: ${during - before} connection(s) added on the server ` +
        `(${during} in all), heap ${(heapBefore / 1024).toFixed(0)} KiB before, ${(heapDuring / 1024).toFixed(0)} KiB with them ` +
        `(${((heapDuring - heapBefore) / ORDERS / 1024).toFixed(1)} KiB per watch)`,
    );
    expect(during - before).toBeLessThanOrEqual(1);

    await page.evaluate(() => (globalThis as unknown as ManyGlobals).many.close());
    await waitFor(async () => gate.connections <= before, 'socket closed');
    await page.close();
  }, 60_000);
});
