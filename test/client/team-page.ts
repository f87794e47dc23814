import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import type { TransportName, WatchItem } from '@app/client';
import { OrderStatus } from '@app/order-domain/order-status';
import type { Browser } from '../browser/browser';
import type { TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { seqsOf } from './browser-watch';
import { shippedOrder, track } from './client-harness';

/**
 * A team's page on another origin that loads the client library (from the service, or
 * from an installed package) and follows an order with it in headless Chromium.
 */

export const BROWSER_TRANSPORTS: readonly TransportName[] = ['sse', 'ws', 'websocket', 'longpoll'];

export interface Origin {
  readonly origin: string;
  close(): void;
}

/** Another origin: `handler` on its own port of 127.0.0.1. */
export async function startOrigin(handler: RequestListener): Promise<Origin> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => server.close(),
  };
}

/**
 * A page whose module script imports the library from `specifier` (a URL, or a name an
 * import map in `head` resolves) as `OrderStatusClient`, or sets `libError` if it cannot.
 */
export function moduleImportPage(specifier: string, head = ''): string {
  return [
    '<!doctype html><meta charset="utf-8"><title>a team page</title>',
    head,
    '<script type="module" onerror="globalThis.libError = true">',
    `import * as lib from ${JSON.stringify(specifier)}; globalThis.OrderStatusClient = lib;`,
    '</script>',
  ].join('\n');
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

/** Opens `url` and waits for its script: whether the library loaded. */
export async function openTeamPage(browser: Browser, url: string): Promise<[Page, boolean]> {
  const page = await browser.context.newPage();
  await page.goto(url);
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
  return [page, loaded];
}

function pageState(page: Page): Promise<PageState> {
  return page.evaluate(() => (globalThis as unknown as PageGlobals).state);
}

/**
 * The page follows a new shipped order on every browser transport with the library it
 * loaded; a tracking update and the delivery are published once each watch has the
 * history. Per transport: the seqs it was given and its last item.
 */
export async function followFromPage(
  page: Page,
  app: TestApp,
  orderId: string,
): Promise<{ transport: string; seqs: number[]; end: WatchItem | undefined }[]> {
  await shippedOrder(app, orderId);
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
    { baseUrl: app.httpUrl, orderId, token: app.defaultToken, transports: BROWSER_TRANSPORTS },
  );
  await waitFor(
    async () => {
      const s = await pageState(page);
      return BROWSER_TRANSPORTS.every((t) => seqsOf(s.items[t] ?? []).includes(4));
    },
    'history on every transport',
    15_000,
  );
  await track(app, orderId);
  await app.publish(orderId, OrderStatus.Delivered);
  const s = await waitFor(
    async () => {
      const state = await pageState(page);
      return BROWSER_TRANSPORTS.every((t) => state.done[t]) ? state : undefined;
    },
    'every watch ended',
    15_000,
  );
  return BROWSER_TRANSPORTS.map((transport) => ({
    transport,
    seqs: seqsOf(s.items[transport]),
    end: s.items[transport].at(-1),
  }));
}

/** What `followFromPage` returns when every watch got seqs 1-6 and completed. */
export function completedOnEveryTransport() {
  return BROWSER_TRANSPORTS.map((transport) => ({
    transport,
    seqs: [1, 2, 3, 4, 5, 6],
    end: expect.objectContaining({ kind: 'end', reason: 'completed' }) as unknown,
  }));
}
