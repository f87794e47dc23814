import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { ORDER_PAGE, ORDER_STATUS_SEQUENCE, OrderStatus, publishTracking } from '@app/order-domain';
import { startTestApp, type TestApp } from '../support/test-app';
import { DEFAULT_TEST_TOKEN } from '../support/auth';
import { waitFor } from '../support/wait-for';
import { ARTIFACTS_DIR, launchBrowser, type Browser } from './browser';

/** What the page exposes as `window.orderStatusDemo` (see public/assets/app.js). */
interface DemoState {
  conn: string;
  lastSeq: number;
  seqs: number[];
  reconnects: number;
  resumes: number;
  lost: number;
  duplicates: number;
  ends: string[];
}

const WAIT_MS = 10_000;

function demoState(page: Page): Promise<DemoState> {
  return page.evaluate(
    () => (globalThis as unknown as { orderStatusDemo: DemoState }).orderStatusDemo,
  );
}

/** Waits (bounded) until the page's state satisfies `predicate`. */
async function until(page: Page, predicate: (s: DemoState) => boolean, what: string) {
  // Polled from here: the page's CSP (script-src 'self') forbids evaluating strings in it.
  await waitFor(async () => predicate(await demoState(page)), what, WAIT_MS, 25);
}

/** The page keeps its token in localStorage; put the test token there before it loads. */
async function withTestToken(page: Page): Promise<void> {
  await page.addInitScript((token) => {
    const g = globalThis as unknown as { localStorage: { setItem(k: string, v: string): void } };
    g.localStorage.setItem('orderStatus.token', token);
  }, DEFAULT_TEST_TOKEN);
}

/** Opens the page on `orderId` over `transport`, with the test token, connected. */
async function openDemo(browser: Browser, app: TestApp, orderId: string, transport: string) {
  const page = await browser.context.newPage();
  await withTestToken(page);
  await page.goto(`${app.httpUrl}/?order=${orderId}&transport=${transport}&autostart=1`);
  await until(page, (s) => s.conn === 'live', 'page connected');
  return page;
}

describe('demo page in chromium', () => {
  let browser: Browser;
  let app: TestApp;

  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser.close();
  });
  afterEach(async () => {
    for (const page of browser.context.pages()) await page.close();
    await app.close();
  });

  it.each(['sse', 'ws', 'websocket', 'long-poll'])(
    'follows an order over %s, resumes after a dropped connection with nothing lost',
    async (transport) => {
      app = await startTestApp();
      const orderId = `web-${transport}`;
      await app.createOrder(orderId, OrderStatus.Paid);
      const page = await openDemo(browser, app, orderId, transport);
      await until(page, (s) => s.lastSeq === 2, 'history received');

      await app.publish(orderId, OrderStatus.Packed);
      await until(page, (s) => s.lastSeq === 3, 'live event received');
      await page.click('#drop');
      // Published while the page is disconnected (or reconnecting): must not be lost.
      await app.publish(orderId, OrderStatus.Shipped);
      await until(page, (s) => s.reconnects >= 1 && s.conn === 'live', 'page reconnected');
      await app.publish(orderId, OrderStatus.OutForDelivery);
      await until(page, (s) => s.lastSeq === 5, 'missed and new events received');

      const state = await demoState(page);
      expect(state.seqs).toEqual([1, 2, 3, 4, 5]);
      expect(state).toMatchObject({ lost: 0, duplicates: 0 });
      expect(state.resumes).toBeGreaterThanOrEqual(1);
      expect(await page.textContent('[data-testid=current-status]')).toBe('out for delivery');

      // A tracking update shares the seq sequence and gets its own row.
      await publishTracking(app.store, {
        orderId,
        location: { lat: 52.37, lon: 4.89 },
        etaMs: Date.now() + 3_600_000,
      });
      await until(page, (s) => s.lastSeq === 6, 'tracking update received');
      expect(await page.textContent('#timeline li[data-kind=tracking]')).toContain(
        '52.3700, 4.8900',
      );
      await page.screenshot({ path: join(ARTIFACTS_DIR, `demo-${transport}.png`), fullPage: true });

      await app.publish(orderId, OrderStatus.Delivered);
      await until(page, (s) => s.conn === 'completed', 'stream completed');
    },
  );

  it('shows the statuses with the labels of the domain, a cancellation after the first step', async () => {
    app = await startTestApp();
    await app.createOrder('web-cancel', OrderStatus.Paid);
    const page = await openDemo(browser, app, 'web-cancel', 'sse');
    await until(page, (s) => s.lastSeq === 2, 'history received');
    const steps = await page.locator('#stepper li').allTextContents();
    expect(steps).toEqual(ORDER_STATUS_SEQUENCE.map((s) => ORDER_PAGE.statusLabels[s]));

    await app.publish('web-cancel', OrderStatus.Cancelled);
    await until(page, (s) => s.conn === 'completed', 'stream completed');
    expect(await page.textContent('[data-testid=current-status]')).toBe('cancelled');
    expect(await page.locator('#stepper li').allTextContents()).toEqual([
      ORDER_PAGE.statusLabels[OrderStatus.Created],
      'cancelled',
      ...steps.slice(2),
    ]);
    expect(await page.getAttribute('#stepper li:nth-child(2)', 'class')).toBe('cancelled');
  });

  it('says what it offers: the transports of its picker, by name', async () => {
    app = await startTestApp();
    const page = await browser.context.newPage();
    await page.goto(`${app.httpUrl}/`);
    const offered = (await page.locator('[name=transport] + span').allTextContents()).map((t) =>
      t.trim(),
    );
    const tagline = (await page.textContent('.tagline')) ?? '';
    for (const name of offered) expect(tagline).toContain(name);
    // A count of transports, if the tagline gives one, is the picker's.
    const counts = ['one', 'two', 'three', 'four', 'five'];
    const count = /\b(one|two|three|four|five) transports\b/i.exec(tagline)?.[1];
    if (count !== undefined) expect(counts.indexOf(count.toLowerCase()) + 1).toBe(offered.length);
  });

  it('EventSource reconnects with Last-Event-ID after the server ends the stream (max age)', async () => {
    app = await startTestApp({
      STREAM_MAX_AGE_MS: '1500',
      STREAM_MAX_AGE_JITTER_MS: '0',
      SSE_RETRY_MS: '100',
    });
    await app.createOrder('web-age', OrderStatus.Paid, OrderStatus.Packed);
    const page = await browser.context.newPage();
    // Playwright reads a request's full headers over CDP after the `request` event, so
    // the promise can settle after the page already shows the reconnect: keep every
    // promise and await them before asserting, rather than racing their callbacks.
    // EventSource keeps reconnecting every max age until the page closes; a request
    // still in flight then has no headers to give (the browser is gone), not an error.
    const lastEventIds: Promise<string | null>[] = [];
    page.on('request', (req) => {
      if (!req.url().includes('/web-age/stream')) return;
      lastEventIds.push(req.headerValue('last-event-id').catch(() => null));
    });
    await withTestToken(page);
    await page.goto(`${app.httpUrl}/?order=web-age&transport=sse&autostart=1`);
    await until(page, (s) => s.lastSeq === 3, 'history received');

    // The server ends the stream with `max_age`; EventSource reconnects by itself.
    await until(
      page,
      (s) => s.ends.includes('max_age') && s.reconnects >= 1 && s.conn === 'live',
      'stream ended with max_age and EventSource reconnected',
    );
    const sent = (await Promise.all(lastEventIds)).filter((id) => id !== null);
    expect(sent[0]).toBe('3');
    await app.publish('web-age', OrderStatus.Shipped);
    await until(page, (s) => s.lastSeq === 4, 'live event after the reconnect');
    const state = await demoState(page);
    expect(state.seqs).toEqual([1, 2, 3, 4]);
    expect(state).toMatchObject({ lost: 0, duplicates: 0 });
    expect(app.bus.stats.resumes).toBeGreaterThanOrEqual(1);
    await page.screenshot({ path: join(ARTIFACTS_DIR, 'demo-sse-max-age.png'), fullPage: true });
    await page.close();
  });
});
