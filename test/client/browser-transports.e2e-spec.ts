import type { Page } from 'playwright-core';
import { OrderStatus } from '@app/order-domain/order-status';
import type { TransportName } from '@app/client';
import { launchBrowser, type Browser } from '../browser/browser';
import { restartOnSamePorts, startRestartableApp } from '../support/restart-app';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import {
  forceReconnects,
  openPage as openPageOf,
  pageWatch,
  seqsOf,
  startWatch,
  until,
  type PageGlobals,
  type PageWatch,
} from './browser-watch';
import { range, shippedOrder, track, trackThenDeliver, openStreams } from './client-harness';

const FORCED_RECONNECTS = 50;
const BROWSER_TRANSPORTS: readonly TransportName[] = ['sse', 'ws', 'websocket', 'longpoll'];

/**
 * The bundled library in headless Chromium (the demo page's origin, its CSP and cookies)
 * on the browser transports: SSE through EventSource (session cookie), socket.io and
 * long-poll over fetch. Same promises as in Node: nothing lost or shown twice whatever
 * ends a connection, the server's advice followed, nothing left running after close().
 */
describe('client library in chromium', () => {
  let browser: Browser;
  let app: TestApp | undefined;
  let page: Page;

  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser.close();
  });
  afterEach(async () => {
    for (const p of browser.context.pages()) await p.close();
    await browser.context.clearCookies();
    await app?.close();
    app = undefined;
  });

  const openPage = (a: TestApp): Promise<Page> => openPageOf(browser, a);

  describe.each(BROWSER_TRANSPORTS)('over %s', (transport) => {
    /** The service for the tests that need no special configuration. */
    let shared: TestApp;
    beforeAll(async () => {
      shared = await startTestApp();
    });
    afterAll(async () => {
      await shared.close();
    });

    it(`loses nothing and shows nothing twice across ${FORCED_RECONNECTS} forced reconnects`, async () => {
      const a = shared;
      await shippedOrder(a, 'bfr-1');
      page = await openPage(a);
      await page.exposeFunction('publishTracking', () => track(a, 'bfr-1'));
      await startWatch(page, { orderId: 'bfr-1', transport, token: a.defaultToken });
      await until(page, 'history delivered', (s) => s.cursor === 4);
      const last = await forceReconnects(page, FORCED_RECONNECTS);
      await a.publish('bfr-1', OrderStatus.Delivered);
      const s = await until(page, 'completed', (w) => w.done);
      expect(seqsOf(s.items)).toEqual(range(1, last + 1));
      expect(s.items.at(-1)).toMatchObject({ kind: 'end', reason: 'completed' });
      expect(s.items.filter((i) => i.kind === 'gap')).toEqual([]);
      expect(s.stats.lost).toBe(0);
      expect(s.stats.reconnects).toBeGreaterThanOrEqual(FORCED_RECONNECTS);
    }, 60_000);

    it('resumes after a server restart, no sooner than the server advised', async () => {
      // No jitter: every client is advised the minimum (100 ms; long-poll: Retry-After 1 s).
      const env = { SHUTDOWN_RECONNECT_JITTER_MS: '0', SHUTDOWN_DRAIN_MS: '1500' };
      const first = await startRestartableApp(env);
      app = first;
      await shippedOrder(first, 'brs-1');
      page = await openPage(first);
      await startWatch(page, { orderId: 'brs-1', transport, token: first.defaultToken });
      await until(page, 'history delivered', (s) => s.cursor === 4);
      await waitFor(() => openStreams(first) === 1, 'stream open on the server');
      const second = await restartOnSamePorts(first, env, (a) => (app = a));
      await shippedOrder(second, 'brs-1');
      const five = await track(second, 'brs-1');
      await until(page, 'resumed after the restart', (s) => s.cursor === five, 15_000);
      await second.publish('brs-1', OrderStatus.Delivered);
      const s = await until(page, 'completed', (w) => w.done);
      expect(seqsOf(s.items)).toEqual(range(1, 6));
      expect(s.stats.lost).toBe(0);
      const ended = s.log.findIndex((c) => c.e.type === 'retrying' && c.e.reason === 'shutdown');
      expect(ended).toBeGreaterThanOrEqual(0);
      const reopened = s.log.slice(ended).find((c) => c.e.type === 'open');
      expect(reopened).toBeDefined();
      const advisedMs = transport === 'longpoll' ? 1_000 : 100;
      expect(reopened!.at - s.log[ended].at).toBeGreaterThanOrEqual(advisedMs - 5);
    }, 40_000);

    it('resumes after the maximum stream age with nothing lost', async () => {
      app = await startTestApp({
        STREAM_MAX_AGE_MS: '250',
        STREAM_MAX_AGE_JITTER_MS: '0',
        SSE_RETRY_MS: '100',
      });
      const a = app;
      await shippedOrder(a, 'bma-1');
      page = await openPage(a);
      await startWatch(page, {
        orderId: 'bma-1',
        transport,
        token: a.defaultToken,
        longPollWaitS: 1,
      });
      // Events keep coming across at least two ended streams (long-poll: 1.4 s of them); a
      // loaded host can take longer than the age to reconnect, so the count decides, not a clock.
      const maxAgeEnds = (w: PageWatch) =>
        w.log.filter((c) => c.e.type === 'retrying' && c.e.reason === 'max_age').length;
      const started = performance.now();
      let last = 4;
      for (;;) {
        last = await track(a, 'bma-1');
        await new Promise((r) => setTimeout(r, 40));
        const elapsed = performance.now() - started;
        if (elapsed > 15_000) break;
        if (elapsed < 1_400) continue;
        if (transport === 'longpoll' || maxAgeEnds(await pageWatch(page)) >= 2) break;
      }
      await a.publish('bma-1', OrderStatus.Delivered);
      const s = await until(page, 'completed', (w) => w.done);
      expect(seqsOf(s.items)).toEqual(range(1, last + 1));
      expect(s.stats.lost).toBe(0);
      if (transport !== 'longpoll') {
        expect(maxAgeEnds(s)).toBeGreaterThanOrEqual(2);
      }
    }, 30_000);

    it('after the token expires, resumes with a token from getToken() and loses nothing', async () => {
      app = await startTestApp({ AUTH_CLOCK_TOLERANCE_S: '0' });
      const a = app;
      await shippedOrder(a, 'bte-1', 'alice');
      const mint = () => a.token({ sub: 'alice', scopes: ['orders:read'], ttlS: 2 });
      page = await openPage(a);
      let minted = 0;
      await page.exposeFunction('mintToken', () => {
        minted++;
        return mint();
      });
      await startWatch(page, {
        orderId: 'bte-1',
        transport,
        token: mint(),
        getToken: true,
        refreshBeforeExpiryMs: -60_000,
      });
      const last = await trackThenDeliver(a, 'bte-1');
      const s = await until(page, 'completed', (w) => w.done);
      expect(s.items.at(-1)).toMatchObject({ kind: 'end', reason: 'completed' });
      expect(seqsOf(s.items)).toEqual(range(1, last + 1));
      expect(s.stats.lost).toBe(0);
      expect(minted).toBeGreaterThanOrEqual(1);
    }, 30_000);

    it('takes a reset when the resume point is ahead of the order, then follows it', async () => {
      const a = shared;
      await shippedOrder(a, 'brr-1');
      page = await openPage(a);
      await startWatch(page, { orderId: 'brr-1', transport, token: a.defaultToken, after: 40 });
      await until(page, 'reset', (s) => s.items.some((i) => i.kind === 'reset'));
      const five = await track(a, 'brr-1');
      const s = await until(page, 'event after the reset', (w) => w.cursor === five);
      expect(s.items.map((i) => i.kind)).toEqual(['reset', 'tracking']);
    });

    it('pauses while the browser is offline and resumes on online, nothing lost', async () => {
      const a = shared;
      await shippedOrder(a, 'bof-1');
      page = await openPage(a);
      await startWatch(page, { orderId: 'bof-1', transport, token: a.defaultToken });
      await until(page, 'history delivered', (s) => s.cursor === 4);
      await browser.context.setOffline(true);
      let five: number;
      try {
        await until(page, 'paused', (s) => s.log.some((c) => c.e.type === 'paused'));
        five = await track(a, 'bof-1');
        const offline = await pageWatch(page);
        const paused = offline.log.findIndex((c) => c.e.type === 'paused');
        // No attempt while offline: nothing after the pause but the wait for `online`.
        expect(offline.log.slice(paused + 1)).toEqual([]);
      } finally {
        await browser.context.setOffline(false);
      }
      await until(page, 'resumed when back online', (s) => s.cursor === five);
      await a.publish('bof-1', OrderStatus.Delivered);
      const s = await until(page, 'completed', (w) => w.done);
      expect(seqsOf(s.items)).toEqual(range(1, 6));
      expect(s.stats).toMatchObject({ lost: 0, resumes: 1 });
    });

    it('close() leaves no timer and no stream behind; a refused token ends the watch', async () => {
      const a = shared;
      await shippedOrder(a, 'bab-1');
      page = await openPage(a);
      const before = await page.evaluate(
        () => (globalThis as unknown as PageGlobals).pendingTimers.size,
      );
      await startWatch(page, { orderId: 'bab-1', transport, token: a.defaultToken });
      await until(page, 'history delivered', (s) => s.cursor === 4);
      await page.evaluate(() => (globalThis as unknown as PageGlobals).testWatch.w.close());
      const s = await until(page, 'ended', (w) => w.done);
      expect(s.items.at(-1)).toMatchObject({ kind: 'end', reason: 'aborted', lastSeq: 4 });
      await waitFor(() => openStreams(a) === 0, 'server released the stream');
      await until(page, 'no timer left', (w) => w.timers <= before, 3_000);

      await startWatch(page, { orderId: 'bab-1', transport, token: 'not-a-token' });
      const refused = await until(page, 'refused', (w) => w.done);
      expect(refused.items.at(-1)).toMatchObject({
        kind: 'end',
        reason: 'error',
        error: { code: 'unauthenticated' },
      });
      expect(refused.log.filter((c) => c.e.type === 'connecting')).toHaveLength(1);
    });
  });
});
