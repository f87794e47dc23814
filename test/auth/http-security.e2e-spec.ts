import { request } from 'undici';
import { OrderStatus } from '@app/order-domain';
import { authorizedEventSource } from '../support/event-source';
import { openSseH1 } from '../support/sse-stream';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { ClientPool } from '../ws/orders-client';
import { EventSource } from 'eventsource';

async function ticketFor(app: TestApp, orderId: string, token = app.defaultToken): Promise<string> {
  const res = await request(`${app.httpUrl}/v1/stream-tickets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ orderId }),
  });
  expect(res.statusCode).toBe(201);
  const body = (await res.body.json()) as { ticket: string; streamPath: string };
  expect(body.streamPath).toBe(`/v1/orders/${orderId}/stream?ticket=${body.ticket}`);
  return body.ticket;
}

/**
 * Everything Jest can fake but Date, which then runs with real time (`advanceTimers`) and
 * can jump: the service and the clients keep real timers.
 */
const REAL_TIMERS = [
  'hrtime',
  'nextTick',
  'performance',
  'queueMicrotask',
  'requestAnimationFrame',
  'cancelAnimationFrame',
  'requestIdleCallback',
  'cancelIdleCallback',
  'setImmediate',
  'clearImmediate',
  'setInterval',
  'clearInterval',
  'setTimeout',
  'clearTimeout',
] as const;

describe('EventSource credentials: single-use tickets and the session cookie', () => {
  let app: TestApp;
  beforeEach(async () => {
    // Before the service starts: its ticket store keeps the Date.now it finds.
    jest.useFakeTimers({ doNotFake: [...REAL_TIMERS], advanceTimers: true });
    app = await startTestApp({ AUTH_STREAM_TICKET_TTL_S: '1' });
  });
  afterEach(async () => {
    await app.close();
    jest.useRealTimers();
  });

  it('a ticket opens one stream once, for its order only, and not after it expires', async () => {
    await app.createOrder('t-1', OrderStatus.Paid);
    await app.createOrder('t-2');
    const ticket = await ticketFor(app, 't-1');
    const first = await openSseH1(`${app.httpUrl}/v1/orders/t-1/stream?ticket=${ticket}`, {
      authorization: '',
    });
    expect(first.status).toBe(200);
    await first.waitFor(() => first.events().length === 2, 'events');
    first.close();
    const again = await openSseH1(`${app.httpUrl}/v1/orders/t-1/stream?ticket=${ticket}`, {
      authorization: '',
    });
    expect(again.status).toBe(401);
    await again.ended;
    expect(again.events()).toEqual([]);

    const other = await ticketFor(app, 't-1');
    const wrongOrder = await openSseH1(`${app.httpUrl}/v1/orders/t-2/stream?ticket=${other}`, {
      authorization: '',
    });
    expect(wrongOrder.status).toBe(401);

    const late = await ticketFor(app, 't-1');
    jest.setSystemTime(Date.now() + 1_100); // past the ticket's 1 s TTL
    const expired = await openSseH1(`${app.httpUrl}/v1/orders/t-1/stream?ticket=${late}`, {
      authorization: '',
    });
    expect(expired.status).toBe(401);
    await expired.ended;
    expect(JSON.parse(expired.body())).toMatchObject({ error: { code: 'unauthenticated' } });
  });

  it('a browser-style EventSource (no headers) streams with a ticket', async () => {
    await app.createOrder('t-es', OrderStatus.Paid);
    const ticket = await ticketFor(app, 't-es');
    const es = new EventSource(`${app.httpUrl}/v1/orders/t-es/stream?ticket=${ticket}`);
    const seen: number[] = [];
    es.addEventListener('status', (e) => seen.push((JSON.parse(e.data) as { seq: number }).seq));
    await waitFor(() => seen.length === 2, 'ticketed EventSource receives');
    es.close();
    expect(seen).toEqual([1, 2]);
  });

  it('POST /v1/session sets an HttpOnly SameSite cookie the SSE route accepts; DELETE clears it', async () => {
    await app.createOrder('c-1');
    const res = await request(`${app.httpUrl}/v1/session`, {
      method: 'POST',
      headers: app.authHeaders,
    });
    expect(res.statusCode).toBe(200);
    const setCookie = String(res.headers['set-cookie']);
    expect(setCookie).toMatch(/^order_status_token=[^;]+;/);
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Strict/i);
    expect(setCookie).toMatch(/Path=\/v1\//);
    const cookie = setCookie.split(';')[0];
    const s = await openSseH1(`${app.httpUrl}/v1/orders/c-1/stream`, { authorization: '', cookie });
    expect(s.status).toBe(200);
    await s.waitFor(() => s.events().length === 1, 'cookie stream');
    s.close();
    // The cookie is for EventSource's GET only: a POST with it alone is refused (CSRF).
    const post = await request(`${app.httpUrl}/v1/orders/c-1/status`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'paid' }),
    });
    expect(post.statusCode).toBe(401);
    const del = await request(`${app.httpUrl}/v1/session`, {
      method: 'DELETE',
      headers: app.authHeaders,
    });
    expect(del.statusCode).toBe(204);
    expect(String(del.headers['set-cookie'])).toMatch(/order_status_token=;/);
  });

  it('authorizedEventSource is only a test convenience: a header-less EventSource is refused', async () => {
    await app.createOrder('c-2');
    const es = new EventSource(`${app.httpUrl}/v1/orders/c-2/stream`);
    await waitFor(() => es.readyState === EventSource.CLOSED, 'refused EventSource gives up');
    es.close();
    const ok = authorizedEventSource(`${app.httpUrl}/v1/orders/c-2/stream`);
    await waitFor(() => ok.readyState === EventSource.OPEN, 'authorized EventSource opens');
    ok.close();
  });
});

describe('HTTP security headers, CORS and the socket.io Origin allow-list', () => {
  let app: TestApp;
  const pool = new ClientPool();
  beforeEach(async () => {
    app = await startTestApp({
      WS_CORS_ORIGINS: 'https://app.example',
      HTTP_CORS_ORIGINS: 'https://app.example',
    });
    await app.createOrder('o-1');
  });
  afterEach(async () => {
    await pool.closeAll();
    await app.close();
  });

  it('sends the page header set on the demo page and the API set everywhere else', async () => {
    for (const path of ['/', '/index.html', '/assets/app.js']) {
      const page = await request(`${app.httpUrl}${path}`);
      expect(page.statusCode).toBe(200);
      const csp = String(page.headers['content-security-policy']);
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("connect-src 'self' ws: wss:");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(page.headers['x-frame-options']).toBe('DENY');
      expect(page.headers['x-content-type-options']).toBe('nosniff');
      expect(page.headers['cross-origin-opener-policy']).toBe('same-origin');
      await page.body.dump();
    }

    const apiCsp = "default-src 'none';frame-ancestors 'none'";
    const expectApiSet = (headers: Record<string, unknown>) => {
      expect(headers['content-security-policy']).toBe(apiCsp);
      expect(headers['x-content-type-options']).toBe('nosniff');
      expect(headers['cross-origin-resource-policy']).toBe('same-origin');
      expect(headers['referrer-policy']).toBe('no-referrer');
      expect(headers['strict-transport-security']).toMatch(/^max-age=\d+/);
      // Page-only headers stay off API answers (bytes on every poll, memory per stream).
      expect(headers['cross-origin-opener-policy']).toBeUndefined();
      expect(headers['x-dns-prefetch-control']).toBeUndefined();
    };
    const json = await request(`${app.httpUrl}/v1/orders/o-1`, { headers: app.authHeaders });
    expect(json.statusCode).toBe(200);
    expectApiSet(json.headers);
    await json.body.dump();
    const refused = await request(`${app.httpUrl}/v1/orders/o-1`);
    expect(refused.statusCode).toBe(401);
    expect(String(refused.headers['www-authenticate'])).toMatch(/^Bearer/);
    expectApiSet(refused.headers);
    await refused.body.dump();
    // SSE writes its own head on the raw response; the set must be on it too.
    const stream = await request(`${app.httpUrl}/v1/orders/o-1/stream`, {
      headers: app.authHeaders,
    });
    expect(stream.statusCode).toBe(200);
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    expectApiSet(stream.headers);
    stream.body.destroy();
    // ...and on the typed error it answers before the stream starts.
    const unknown = await request(`${app.httpUrl}/v1/orders/nope/stream`, {
      headers: app.authHeaders,
    });
    expect(unknown.statusCode).toBe(404);
    expectApiSet(unknown.headers);
    await unknown.body.dump();
    // A held long-poll gets the set when it is answered (204 here: nothing new).
    const poll = await request(`${app.httpUrl}/v1/orders/o-1/events?after=1&wait=1`, {
      headers: app.authHeaders,
    });
    expect(poll.statusCode).toBe(204);
    expectApiSet(poll.headers);
    await poll.body.dump();
  });

  it('answers CORS preflights for listed origins only', async () => {
    const preflight = (origin: string) =>
      request(`${app.httpUrl}/v1/orders/o-1/status`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,content-type',
        },
      });
    const allowed = await preflight('https://app.example');
    expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example');
    const foreign = await preflight('https://evil.example');
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('lets a listed origin read SSE streams and long-poll answers, which write their own head', async () => {
    const origin = 'https://app.example';
    const headers = { ...app.authHeaders, origin };
    const stream = await request(`${app.httpUrl}/v1/orders/o-1/stream`, { headers });
    expect(stream.statusCode).toBe(200);
    expect(stream.headers['access-control-allow-origin']).toBe(origin);
    expect(stream.headers['access-control-allow-credentials']).toBe('true');
    stream.body.destroy();
    for (const after of [0, 1]) {
      // after=0: answered at once (200); after=1: held, then 204 when the wait ends.
      const poll = await request(`${app.httpUrl}/v1/orders/o-1/events?after=${after}&wait=1`, {
        headers,
      });
      expect(poll.statusCode).toBe(after === 0 ? 200 : 204);
      expect(poll.headers['access-control-allow-origin']).toBe(origin);
      expect(poll.headers['cache-control']).toBe('no-store');
      await poll.body.dump();
    }
    const foreign = await request(`${app.httpUrl}/v1/orders/o-1/stream`, {
      headers: { ...app.authHeaders, origin: 'https://evil.example' },
    });
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
    foreign.body.destroy();
  });

  it.each(['websocket', 'polling'] as const)(
    'refuses socket.io from a foreign Origin on %s',
    async (transport) => {
      const err = await pool
        .connect(app.httpUrl, { transport, extraHeaders: { origin: 'https://evil.example' } })
        .catch((e: unknown) => e as Error);
      expect(err).toBeInstanceOf(Error);
      expect(app.bus.subscriberCount()).toBe(0);
      // Listed and same-origin pages, and non-browser clients (no Origin), get in.
      for (const origin of ['https://app.example', app.httpUrl]) {
        const c = await pool.connect(app.httpUrl, { transport, extraHeaders: { origin } });
        expect((await c.subscribe('o-1')).ok).toBe(true);
      }
    },
  );
});
