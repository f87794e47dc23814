import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { request } from 'undici';
import type { TransportName, WatchItem } from '@app/client';
import { OrderStatus } from '@app/contracts/order-status';
import { launchBrowser, type Browser } from '../browser/browser';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { range, shippedOrder, track } from './client-harness';

const MODULE_PATH = '/assets/order-status-client.mjs';
const BROWSER_TRANSPORTS: readonly TransportName[] = ['sse', 'ws', 'longpoll'];

/**
 * Another origin (its own port of 127.0.0.1) serving a team's page: a module script that
 * imports the library from the URL in `?lib=` and exposes it (with `&classic`: a classic
 * script of the IIFE, which defines the global itself), or says it could not.
 */
async function otherOrigin(): Promise<{ origin: string; server: Server }> {
  const server = createServer((req, res) => {
    const query = new URL(req.url ?? '/', 'http://x').searchParams;
    const lib = JSON.stringify(query.get('lib') ?? '');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      [
        '<!doctype html><meta charset="utf-8"><title>a team page</title>',
        query.get('classic') === null
          ? '<script type="module" onerror="globalThis.libError = true">' +
            `import * as lib from ${lib}; globalThis.OrderStatusClient = lib;</script>`
          : `<script src=${lib} onerror="globalThis.libError = true"></script>`,
      ].join('\n'),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

interface PageState {
  readonly items: Record<string, WatchItem[]>;
  readonly done: Record<string, boolean>;
}

type PageGlobals = {
  OrderStatusClient?: typeof import('@app/client');
  libError?: boolean;
  state: PageState;
};

/** A page of `origin` that loads the library from `libUrl`, and whether it could. */
async function openTeamPage(origin: string, libUrl: string, classic = false) {
  const page = await browser.context.newPage();
  await page.goto(`${origin}/?lib=${encodeURIComponent(libUrl)}${classic ? '&classic' : ''}`);
  const handle = await page.waitForFunction(
    () => {
      const g = globalThis as unknown as PageGlobals;
      return g.OrderStatusClient !== undefined || g.libError === true;
    },
    undefined,
    { timeout: 10_000, polling: 50 },
  );
  await handle.dispose();
  const loaded = await page.evaluate(
    () => (globalThis as unknown as PageGlobals).OrderStatusClient !== undefined,
  );
  return [page, loaded] as const;
}

/** The page follows `orderId` on every browser transport with the library it imported. */
async function followFromPage(page: Page, baseUrl: string, orderId: string, token: string) {
  await page.evaluate(
    (a) => {
      const g = globalThis as unknown as PageGlobals;
      g.state = { items: {}, done: {} };
      for (const transport of a.transports) {
        const items: WatchItem[] = [];
        g.state.items[transport] = items;
        const watch = g.OrderStatusClient!.watchOrder(a.orderId, {
          transport,
          baseUrl: a.baseUrl,
          token: a.token,
          longPollWaitS: 5,
        });
        void (async () => {
          for await (const item of watch) items.push(item);
          g.state.done[transport] = true;
        })();
      }
    },
    { baseUrl, orderId, token, transports: BROWSER_TRANSPORTS },
  );
}

function pageState(page: Page): Promise<PageState> {
  return page.evaluate(() => (globalThis as unknown as PageGlobals).state);
}

function seqs(items: readonly WatchItem[]): number[] {
  return items.flatMap((i) =>
    i.kind === 'event' ? [i.event.seq] : i.kind === 'tracking' ? [i.tracking.seq] : [],
  );
}

/**
 * A team's page on another origin imports the client library from the service (the
 * self-contained ES module build) and follows an order over SSE, socket.io and long-poll:
 * CORS for the origins in HTTP_CORS_ORIGINS, `Cross-Origin-Resource-Policy: cross-origin`
 * on the library's builds, served compressed with a validator.
 */
let browser: Browser;

describe('the browser ES module build, loaded by a page of another origin', () => {
  let app: TestApp;
  let team: { origin: string; server: Server };
  let stranger: { origin: string; server: Server };

  beforeAll(async () => {
    team = await otherOrigin();
    stranger = await otherOrigin();
    app = await startTestApp({ HTTP_CORS_ORIGINS: team.origin, WS_CORS_ORIGINS: team.origin });
    browser = await launchBrowser();
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    for (const o of [team, stranger]) o?.server.close();
  });

  it('is served compressed, with an ETag, CORS for listed origins and CORP cross-origin', async () => {
    const url = `${app.httpUrl}${MODULE_PATH}`;
    for (const encoding of ['br', 'gzip']) {
      const res = await request(url, {
        headers: { origin: team.origin, 'accept-encoding': `${encoding}, identity` },
      });
      const raw = Buffer.from(await res.body.arrayBuffer());
      expect(res.statusCode).toBe(200);
      expect(res.headers).toMatchObject({
        'content-encoding': encoding,
        'content-type': expect.stringMatching(/^application\/javascript/),
        'access-control-allow-origin': team.origin,
        'cross-origin-resource-policy': 'cross-origin',
        vary: expect.stringMatching(/accept-encoding/i),
        etag: expect.any(String),
      });
      expect(raw.length).toBeLessThan(25_000);
      const again = await request(url, {
        headers: { 'accept-encoding': encoding, 'if-none-match': String(res.headers.etag) },
      });
      expect(again.statusCode).toBe(304);
      await again.body.dump();
    }
    const plain = await request(url, { headers: { origin: stranger.origin } });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers['access-control-allow-origin']).toBeUndefined();
    expect((await plain.body.text()).length).toBeGreaterThan(50_000);
    // The rest of the page keeps same-origin.
    const appJs = await request(`${app.httpUrl}/assets/app.js`);
    expect(appJs.headers['cross-origin-resource-policy']).toBe('same-origin');
    await appJs.body.dump();
  });

  it('follows an order over every browser transport from a listed origin', async () => {
    await shippedOrder(app, 'xo-1');
    const [page, loaded] = await openTeamPage(team.origin, `${app.httpUrl}${MODULE_PATH}`);
    expect(loaded).toBe(true);
    await followFromPage(page, app.httpUrl, 'xo-1', app.defaultToken);
    const history = (s: PageState) =>
      BROWSER_TRANSPORTS.every((t) => seqs(s.items[t] ?? []).includes(4));
    await waitFor(async () => history(await pageState(page)), 'history on every transport', 15_000);
    const five = await track(app, 'xo-1');
    const delivered = await app.publish('xo-1', OrderStatus.Delivered);
    const s = await waitFor(
      async () => {
        const state = await pageState(page);
        return BROWSER_TRANSPORTS.every((t) => state.done[t]) ? state : undefined;
      },
      'every watch completed',
      15_000,
    );
    for (const t of BROWSER_TRANSPORTS) {
      expect({ t, seqs: seqs(s.items[t]), end: s.items[t].at(-1) }).toEqual({
        t,
        seqs: range(1, delivered.seq),
        end: expect.objectContaining({ kind: 'end', reason: 'completed' }),
      });
    }
    expect(five).toBe(5);
    await page.close();
  }, 45_000);

  it("lets another origin's page load the demo page's IIFE as a classic script", async () => {
    // A classic script is a no-cors load: CORP same-origin would block it.
    const iife = `${app.httpUrl}/assets/order-status-client.js`;
    const [page, loaded] = await openTeamPage(stranger.origin, iife, true);
    expect(loaded).toBe(true);
    await page.close();
  });

  it('is refused to a page of an origin that is not listed', async () => {
    const [page, loaded] = await openTeamPage(stranger.origin, `${app.httpUrl}${MODULE_PATH}`);
    expect(loaded).toBe(false);
    await page.close();
  });
});
