import type { Page, Request, Response } from 'playwright-core';
import { OrderStatus } from '@app/order-domain/order-status';
import { launchBrowser, type Browser } from '../browser/browser';
import { restartOnSamePorts, startRestartableApp } from '../support/restart-app';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import {
  forceReconnects,
  openPage,
  pageWatch,
  seqsOf,
  startWatch,
  until,
  type PageWatch,
} from './browser-watch';
import { range, shippedOrder, track, trackThenDeliver } from './client-harness';

const FORCED_RECONNECTS = 20;
const MAX_AGE_ENDS = 10;

/** What the page sent for its streams and tickets, and what the service answered. */
interface TicketTraffic {
  /** `POST /v1/stream-tickets` requests sent. */
  ticketPosts: number;
  /** The tickets the service issued, each with the token it was asked for with. */
  readonly issued: { ticket: string; token: string }[];
  /**
   * Ticket requests that issued nothing: the status, or `failed` when no answer came (a
   * server restarting: the library tries again after its backoff).
   */
  readonly notIssued: (number | 'failed')[];
  /** Every stream request, in order: its `ticket` parameter (null without) and status. */
  readonly streams: { ticket: string | null; status?: number }[];
  /** Resolves once every stream request is answered and every ticket response read. */
  settled(): Promise<void>;
}

const pathOf = (r: Request) => new URL(r.url()).pathname;
const isStream = (r: Request) => /^\/v1\/orders\/[^/]+\/stream$/.test(pathOf(r));
const isTicketPost = (r: Request) => r.method() === 'POST' && pathOf(r) === '/v1/stream-tickets';

/**
 * Makes the page's `POST /v1/session` answer 404, as a deployment without sessions does
 * (the service under test always offers them, so the browser stands in for one that
 * does not): the library must fall back to single-use stream tickets. Records the
 * ticket and stream traffic.
 */
async function withoutSessions(page: Page): Promise<TicketTraffic> {
  await page.route('**/v1/session', (route) =>
    route.fulfill({
      status: 404,
      contentType: 'application/json',
      body: JSON.stringify({ code: 'not_found', message: 'Cannot POST /v1/session' }),
    }),
  );
  const streams = new Map<Request, TicketTraffic['streams'][number]>();
  const reading: Promise<void>[] = [];
  let answered201 = 0;
  const t: TicketTraffic = {
    ticketPosts: 0,
    issued: [],
    notIssued: [],
    streams: [],
    settled: async () => {
      await waitFor(
        () => t.streams.every((st) => st.status !== undefined),
        'every stream request answered',
      );
      await waitFor(
        () => t.ticketPosts === answered201 + t.notIssued.length,
        'every ticket request answered or failed',
      );
      await Promise.all(reading);
    },
  };
  page.on('request', (r) => {
    if (isTicketPost(r)) t.ticketPosts++;
    if (!isStream(r)) return;
    const entry = { ticket: new URL(r.url()).searchParams.get('ticket') };
    streams.set(r, entry);
    t.streams.push(entry);
  });
  page.on('requestfailed', (r) => {
    if (isTicketPost(r)) t.notIssued.push('failed');
  });
  page.on('response', (res: Response) => {
    const r = res.request();
    const stream = streams.get(r);
    if (stream) stream.status = res.status();
    if (!isTicketPost(r)) return;
    if (res.status() !== 201) {
      t.notIssued.push(res.status());
      return;
    }
    answered201++;
    reading.push(
      Promise.all([res.json() as Promise<{ ticket: string }>, r.allHeaders()]).then(
        ([body, headers]) => {
          const token = (headers.authorization ?? '').replace(/^Bearer /, '');
          t.issued.push({ ticket: body.ticket, token });
        },
      ),
    );
  });
  return t;
}

/**
 * Every stream request carried a ticket of its own, fetched for it, and the service
 * accepted each one (a reused, spent ticket would be a 401); every ticket issued was
 * used; a ticket request that issued nothing only ever met a server going away (no
 * answer, or 503 while draining), never a refusal; no session cookie was set.
 */
async function expectOneTicketPerStream(
  browser: Browser,
  app: TestApp,
  t: TicketTraffic,
): Promise<void> {
  await t.settled();
  const tickets = t.streams.map((s) => s.ticket);
  expect(tickets).not.toContain(null);
  expect(new Set(tickets).size).toBe(tickets.length);
  expect(t.issued).toHaveLength(tickets.length);
  expect(t.notIssued.filter((s) => s !== 'failed' && s !== 503)).toEqual([]);
  expect(new Set(t.issued.map((i) => i.ticket))).toEqual(new Set(tickets));
  expect(t.streams.map((s) => s.status)).toEqual(tickets.map(() => 200));
  expect(await browser.context.cookies(app.httpUrl)).toEqual([]);
}

/**
 * The bundled library in headless Chromium on SSE where the service offers no session
 * cookie: EventSource authenticates each connection with a single-use stream ticket and
 * must not reconnect by itself (the ticket is spent), so every reconnect, whatever
 * caused it, fetches a new ticket; nothing lost or shown twice.
 */
describe('client library in chromium: SSE with stream tickets', () => {
  let browser: Browser;
  let shared: TestApp;
  let app: TestApp | undefined;

  beforeAll(async () => {
    browser = await launchBrowser();
    shared = await startTestApp();
  });
  afterAll(async () => {
    await shared.close();
    await browser.close();
  });
  afterEach(async () => {
    for (const p of browser.context.pages()) await p.close();
    await browser.context.clearCookies();
    await app?.close();
    app = undefined;
  });

  it(`fetches a fresh ticket for each of ${FORCED_RECONNECTS} forced reconnects, nothing lost`, async () => {
    const a = shared;
    await shippedOrder(a, 'btk-1');
    const page = await openPage(browser, a);
    const traffic = await withoutSessions(page);
    await page.exposeFunction('publishTracking', () => track(a, 'btk-1'));
    await startWatch(page, { orderId: 'btk-1', transport: 'sse', token: a.defaultToken });
    await until(page, 'history delivered', (s) => s.cursor === 4);
    expect(traffic.streams).toHaveLength(1);
    expect(traffic.streams[0].ticket).toEqual(expect.any(String));

    const last = await forceReconnects(page, FORCED_RECONNECTS);
    await a.publish('btk-1', OrderStatus.Delivered);
    const s = await until(page, 'completed', (w) => w.done);
    expect(seqsOf(s.items)).toEqual(range(1, last + 1));
    expect(s.items.at(-1)).toMatchObject({ kind: 'end', reason: 'completed' });
    expect(s.items.filter((i) => i.kind === 'gap')).toEqual([]);
    expect(s.stats).toMatchObject({ lost: 0, duplicates: 0 });
    expect(s.stats.reconnects).toBe(FORCED_RECONNECTS);
    await expectOneTicketPerStream(browser, a, traffic);
    expect(traffic.streams).toHaveLength(FORCED_RECONNECTS + 1);
  }, 60_000);

  it(`fetches a fresh ticket after each of ${MAX_AGE_ENDS} max-age ends, nothing lost`, async () => {
    app = await startTestApp({
      STREAM_MAX_AGE_MS: '200',
      STREAM_MAX_AGE_JITTER_MS: '0',
      SSE_RETRY_MS: '100',
    });
    const a = app;
    await shippedOrder(a, 'btm-1');
    const page = await openPage(browser, a);
    const traffic = await withoutSessions(page);
    await startWatch(page, { orderId: 'btm-1', transport: 'sse', token: a.defaultToken });
    const maxAgeEnds = (log: PageWatch['log']) =>
      log.filter((c) => c.e.type === 'retrying' && c.e.reason === 'max_age').length;
    let last = 4;
    await waitFor(
      async () => {
        last = await track(a, 'btm-1');
        return maxAgeEnds((await pageWatch(page)).log) >= MAX_AGE_ENDS;
      },
      `${MAX_AGE_ENDS} max-age ends`,
      15_000,
      40,
    );
    await a.publish('btm-1', OrderStatus.Delivered);
    const s = await until(page, 'completed', (w) => w.done);
    expect(seqsOf(s.items)).toEqual(range(1, last + 1));
    expect(s.stats).toMatchObject({ lost: 0, duplicates: 0 });
    expect(s.stats.reconnects).toBeGreaterThanOrEqual(MAX_AGE_ENDS);
    // Each end is the service's, resumed with a new ticket: not a lost connection.
    const retries = s.log.flatMap((c) => (c.e.type === 'retrying' ? [c.e.reason] : []));
    expect(new Set(retries)).toEqual(new Set(['max_age']));
    await expectOneTicketPerStream(browser, a, traffic);
  }, 30_000);

  it('after a server restart, waits the reconnect delay the service advised', async () => {
    // Each client is advised 100 ms plus up to 2 s at random: well above the watch's own
    // first backoff, so a watch that never read the advice shows it.
    const env = { SHUTDOWN_RECONNECT_JITTER_MS: '2000', SHUTDOWN_DRAIN_MS: '3000' };
    const first = await startRestartableApp(env);
    app = first;
    await shippedOrder(first, 'btr-1');
    const page = await openPage(browser, first);
    const traffic = await withoutSessions(page);
    await startWatch(page, { orderId: 'btr-1', transport: 'sse', token: first.defaultToken });
    await until(page, 'history delivered', (w) => w.cursor === 4);
    const second = await restartOnSamePorts(first, env, (a) => (app = a));
    await shippedOrder(second, 'btr-1');
    const five = await track(second, 'btr-1');
    await until(page, 'resumed after the restart', (w) => w.cursor === five, 15_000);
    await second.publish('btr-1', OrderStatus.Delivered);
    const s = await until(page, 'completed', (w) => w.done);
    expect(seqsOf(s.items)).toEqual(range(1, 6));
    expect(s.stats).toMatchObject({ lost: 0, duplicates: 0 });
    // EventSource never shows `retry:`; the advice came in the end event's data.
    const ended = s.log.findIndex((c) => c.e.type === 'retrying' && c.e.reason === 'shutdown');
    expect(ended).toBeGreaterThanOrEqual(0);
    const retrying = s.log[ended].e as { advisedMs?: number };
    expect(retrying.advisedMs).toEqual(expect.any(Number));
    expect(retrying.advisedMs).toBeGreaterThanOrEqual(100);
    const reopened = s.log.slice(ended).find((c) => c.e.type === 'open');
    expect(reopened!.at - s.log[ended].at).toBeGreaterThanOrEqual(retrying.advisedMs! - 5);
    await expectOneTicketPerStream(browser, second, traffic);
  }, 40_000);

  it('after the token expires, resumes with a ticket for the token from getToken()', async () => {
    app = await startTestApp({ AUTH_CLOCK_TOLERANCE_S: '0' });
    const a = app;
    await shippedOrder(a, 'btt-1', 'alice');
    // `exp` is whole seconds: a token minted at x.999 s with a 2 s TTL is valid for 1.0 s,
    // which a loaded CI host spent before the ticket request reached the guard (a 401).
    // Three seconds leave at least two for the page to use a fresh token.
    const mint = () => a.token({ sub: 'alice', scopes: ['orders:read'], ttlS: 3 });
    const page = await openPage(browser, a);
    const traffic = await withoutSessions(page);
    const minted: string[] = [];
    await page.exposeFunction('mintToken', () => {
      const token = mint();
      minted.push(token);
      return token;
    });
    const first = mint();
    await startWatch(page, {
      orderId: 'btt-1',
      transport: 'sse',
      token: first,
      getToken: true,
      refreshBeforeExpiryMs: -60_000,
    });
    const last = await trackThenDeliver(a, 'btt-1');
    const s = await until(page, 'completed', (w) => w.done);
    expect(s.items.at(-1)).toMatchObject({ kind: 'end', reason: 'completed' });
    expect(seqsOf(s.items)).toEqual(range(1, last + 1));
    expect(s.stats).toMatchObject({ lost: 0, duplicates: 0 });
    const expired = s.log.findIndex((c) => c.e.type === 'token' && c.e.reason === 'expired');
    expect(expired).toBeGreaterThanOrEqual(0);
    expect(s.log.slice(expired).some((c) => c.e.type === 'open' && c.e.reconnect)).toBe(true);

    await expectOneTicketPerStream(browser, a, traffic);
    // The first ticket was asked with the first token; after it expired, the tickets
    // were asked with the tokens getToken() returned, and the stream opened on one.
    expect(minted.length).toBeGreaterThanOrEqual(1);
    const tokenOf = (ticket: string | null) =>
      traffic.issued.find((i) => i.ticket === ticket)?.token;
    expect(tokenOf(traffic.streams[0].ticket)).toBe(first);
    const renewed = traffic.streams.filter((st) => minted.includes(tokenOf(st.ticket) ?? ''));
    expect(renewed).not.toEqual([]);
  }, 30_000);
});
