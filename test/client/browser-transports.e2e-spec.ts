import type { Page } from 'playwright-core';
import { OrderStatus } from '@app/contracts/order-status';
import type { ConnectionEvent, TransportName, WatchItem, WatchStats } from '@app/client';
import { launchBrowser, type Browser } from '../browser/browser';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { range, shippedOrder, track } from './client-harness';

const FORCED_RECONNECTS = 50;
const BROWSER_TRANSPORTS: readonly TransportName[] = ['sse', 'ws', 'longpoll'];

/** What the page keeps about its watch (see `startWatch`). */
interface PageWatch {
  cursor: number;
  stats: WatchStats;
  items: WatchItem[];
  log: { at: number; e: ConnectionEvent }[];
  done: boolean;
  /** Timers of the page still pending (setTimeout, instrumented before any script ran). */
  timers: number;
}

interface WatchArgs {
  readonly orderId: string;
  readonly transport: TransportName;
  readonly token?: string;
  readonly after?: number;
  /** getToken() asks the test (an exposed `mintToken`) for a fresh token. */
  readonly getToken?: boolean;
  readonly refreshBeforeExpiryMs?: number;
  readonly longPollWaitS?: number;
}

/** The page's globals this test uses (the bundle's `OrderStatusClient`, the probes). */
type PageGlobals = {
  setTimeout(fn: (v?: unknown) => void, ms: number): unknown;
  OrderStatusClient: typeof import('@app/client');
  mintToken(): Promise<string>;
  pendingTimers: Set<unknown>;
  testWatch: {
    w: import('@app/client').OrderWatch;
    items: WatchItem[];
    log: PageWatch['log'];
    done: boolean;
  };
};

/**
 * Counts the page's pending timers: setTimeout/clearTimeout wrapped before the page's
 * own scripts (and the bundle) run, so every timer the library or socket.io sets is seen.
 */
function countTimers(): void {
  const g = globalThis as unknown as PageGlobals & {
    setTimeout: (fn: (...a: unknown[]) => void, ms?: number, ...a: unknown[]) => unknown;
    clearTimeout: (id: unknown) => void;
  };
  const pending = new Set<unknown>();
  const set = g.setTimeout.bind(g);
  const clear = g.clearTimeout.bind(g);
  g.pendingTimers = pending;
  g.setTimeout = (fn, ms, ...a) => {
    const id = set(() => {
      pending.delete(id);
      fn(...a);
    }, ms);
    pending.add(id);
    return id;
  };
  g.clearTimeout = (id) => {
    pending.delete(id);
    clear(id);
  };
}

/** Starts a watch in the page with the bundled library; items and events stay in the page. */
async function startWatch(page: Page, args: WatchArgs): Promise<void> {
  await page.evaluate((a) => {
    const g = globalThis as unknown as PageGlobals;
    const log: PageWatch['log'] = [];
    const items: WatchItem[] = [];
    const w = g.OrderStatusClient.watchOrder(a.orderId, {
      transport: a.transport,
      baseUrl: (globalThis as unknown as { location: { origin: string } }).location.origin,
      ...(a.token !== undefined ? { token: a.token } : {}),
      ...(a.after !== undefined ? { after: a.after } : {}),
      ...(a.getToken ? { getToken: () => g.mintToken() } : {}),
      ...(a.refreshBeforeExpiryMs !== undefined
        ? { refreshBeforeExpiryMs: a.refreshBeforeExpiryMs }
        : {}),
      longPollWaitS: a.longPollWaitS ?? 5,
      onConnection: (e) => log.push({ at: performance.now(), e }),
    });
    g.testWatch = { w, items, log, done: false };
    void (async () => {
      for await (const item of w) items.push(item);
      g.testWatch.done = true;
    })();
  }, args);
}

function pageWatch(page: Page): Promise<PageWatch> {
  return page.evaluate(() => {
    const g = globalThis as unknown as PageGlobals;
    const t = g.testWatch;
    return {
      cursor: t.w.cursor,
      stats: t.w.stats,
      // An Error does not cross into the test as such: its code and message do.
      items: t.items.map((i) =>
        i.kind === 'end' && i.reason === 'error'
          ? { ...i, error: { code: i.error.code, message: i.error.message } }
          : i,
      ) as WatchItem[],
      log: t.log,
      done: t.done,
      timers: g.pendingTimers.size,
    };
  });
}

async function until(page: Page, what: string, predicate: (s: PageWatch) => boolean, ms = 10_000) {
  return waitFor(
    async () => {
      const s = await pageWatch(page);
      return predicate(s) ? s : undefined;
    },
    what,
    ms,
    25,
  );
}

function seqsOf(items: WatchItem[]): number[] {
  return items.flatMap((i) =>
    i.kind === 'event' ? [i.event.seq] : i.kind === 'tracking' ? [i.tracking.seq] : [],
  );
}

function openStreams(app: TestApp): number {
  let n = 0;
  for (const v of app.bus.stats.connectionsByTransport.values()) n += v;
  return n;
}

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

  /** A page of the service (the demo page: it loads the bundle), timers counted. */
  async function openPage(a: TestApp): Promise<Page> {
    const p = await browser.context.newPage();
    await p.addInitScript(countTimers);
    await p.goto(`${a.httpUrl}/`);
    await p.waitForFunction(() => 'OrderStatusClient' in globalThis, undefined, {
      timeout: 10_000,
      polling: 50,
    });
    return p;
  }

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
      // The loop runs in the page (publishing through an exposed function), so a round
      // trip to the test per step does not set the pace.
      const last = await page.evaluate(async (n) => {
        const g = globalThis as unknown as PageGlobals & {
          publishTracking(): Promise<number>;
        };
        const { w } = g.testWatch;
        const delivered = async (seq: number) => {
          for (let i = 0; i < 5_000 && w.cursor < seq; i++) {
            await new Promise((r) => g.setTimeout(r, 2));
          }
          if (w.cursor < seq) throw new Error(`seq ${seq} not delivered`);
        };
        let seq = 4;
        for (let i = 0; i < n; i++) {
          seq = await g.publishTracking();
          await delivered(seq);
          w.reconnect();
          // Published while the connection is down or being reopened.
          seq = await g.publishTracking();
        }
        return seq;
      }, FORCED_RECONNECTS);
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
      const first = await startTestApp(env);
      app = first;
      await shippedOrder(first, 'brs-1');
      page = await openPage(first);
      await startWatch(page, { orderId: 'brs-1', transport, token: first.defaultToken });
      await until(page, 'history delivered', (s) => s.cursor === 4);
      await waitFor(() => openStreams(first) === 1, 'stream open on the server');
      await first.close();
      app = undefined;
      const second = await startTestApp({
        ...env,
        HTTP_PORT: String(first.ports.http),
        GRPC_PORT: String(first.ports.grpc),
      });
      app = second;
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
      const deadline = performance.now() + 1_400;
      let last = 4;
      while (performance.now() < deadline) {
        last = await track(a, 'bma-1');
        await new Promise((r) => setTimeout(r, 40));
      }
      await a.publish('bma-1', OrderStatus.Delivered);
      const s = await until(page, 'completed', (w) => w.done);
      expect(seqsOf(s.items)).toEqual(range(1, last + 1));
      expect(s.stats.lost).toBe(0);
      if (transport !== 'longpoll') {
        const ends = s.log.filter((c) => c.e.type === 'retrying' && c.e.reason === 'max_age');
        expect(ends.length).toBeGreaterThanOrEqual(2);
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
      const deadline = performance.now() + 3_200;
      let last = 4;
      while (performance.now() < deadline) {
        last = await track(a, 'bte-1');
        await new Promise((r) => setTimeout(r, 50));
      }
      await a.publish('bte-1', OrderStatus.Delivered);
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
