import type { Page } from 'playwright-core';
import type { ConnectionEvent, TransportName, WatchItem, WatchStats } from '@app/client';
import type { Browser } from '../browser/browser';
import type { TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

/**
 * A watch of the bundled client library in a Chromium page of the service (the demo
 * page: it loads the bundle), driven and read from the test.
 */

/** What the page keeps about its watch (see `startWatch`). */
export interface PageWatch {
  cursor: number;
  stats: WatchStats;
  items: WatchItem[];
  log: { at: number; e: ConnectionEvent }[];
  done: boolean;
  /** Timers of the page still pending (setTimeout, instrumented before any script ran). */
  timers: number;
}

export interface WatchArgs {
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
export type PageGlobals = {
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
export function countTimers(): void {
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
export async function startWatch(page: Page, args: WatchArgs): Promise<void> {
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

export function pageWatch(page: Page): Promise<PageWatch> {
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

export async function until(
  page: Page,
  what: string,
  predicate: (s: PageWatch) => boolean,
  ms = 10_000,
) {
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

export function seqsOf(items: WatchItem[]): number[] {
  return items.flatMap((i) =>
    i.kind === 'event' ? [i.event.seq] : i.kind === 'tracking' ? [i.tracking.seq] : [],
  );
}

/** A page of the service (the demo page: it loads the bundle), timers counted. */
export async function openPage(browser: Browser, app: TestApp): Promise<Page> {
  const p = await browser.context.newPage();
  await p.addInitScript(countTimers);
  await p.goto(`${app.httpUrl}/`);
  await p.waitForFunction(() => 'OrderStatusClient' in globalThis, undefined, {
    timeout: 10_000,
    polling: 50,
  });
  return p;
}

/**
 * `n` times: a tracking update delivered, `reconnect()`, another update published while
 * the connection is down or being reopened; the last seq. The loop runs in the page
 * (publishing through an exposed `publishTracking`), so a round trip to the test per
 * step does not set the pace.
 */
export function forceReconnects(page: Page, n: number): Promise<number> {
  return page.evaluate(async (count) => {
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
    let seq = w.cursor;
    for (let i = 0; i < count; i++) {
      seq = await g.publishTracking();
      await delivered(seq);
      w.reconnect();
      // Published while the connection is down or being reopened.
      seq = await g.publishTracking();
    }
    return seq;
  }, n);
}
