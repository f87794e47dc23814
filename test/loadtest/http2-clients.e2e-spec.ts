import { OrderStatus } from '@app/order-domain/order-status';
import { Http2Getter, type HttpGetter } from '../../loadtest/src/clients/http-stream';
import { RawHttp2Getter } from '../../loadtest/src/clients/lean/raw-http2-getter';
import { LongPollConnector } from '../../loadtest/src/clients/long-poll-connector';
import { SseConnector } from '../../loadtest/src/clients/sse-connector';
import type { Connector } from '../../loadtest/src/clients/transport';
import { follow } from './follow';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * The load test's two HTTP/2 clients against the service itself (TLS, auth, its
 * answers and refusals): `node:http2`'s (Http2Getter) and the raw one (RawHttp2Getter),
 * under long-poll's and SSE's connectors, report the same, so a scale run counts the
 * same whichever reads.
 */
describe('load-test HTTP/2 clients against the service', () => {
  let app: TestApp;
  const connectors: Connector[] = [];
  const getters = (): [string, HttpGetter][] => {
    const port = Number(new URL(app.httpsUrl).port);
    return [
      ['node:http2', new Http2Getter('127.0.0.1', port)],
      ['raw', new RawHttp2Getter('127.0.0.1', port)],
    ];
  };
  const clients = (transport: 'longpoll-h2' | 'sse-h2', token: string | undefined) =>
    getters().map(([name, getter]): [string, Connector] => {
      const c =
        transport === 'longpoll-h2'
          ? new LongPollConnector(transport, getter, 'bare', token, { waitS: 5, intervalMs: 0 })
          : new SseConnector(transport, getter, 'bare', token);
      connectors.push(c);
      return [name, c];
    });

  beforeAll(async () => {
    app = await startTestApp();
    await app.createOwnedOrder('h2c-1', 'alice', OrderStatus.Paid, OrderStatus.Packed);
    await app.createOwnedOrder('h2c-2', 'bob');
  });
  afterAll(async () => {
    await Promise.all(connectors.map((c) => c.close()));
    await app.close();
  });

  const alice = (): string => app.token({ sub: 'alice', scopes: ['orders:read'] });

  it.each(['longpoll-h2', 'sse-h2'] as const)(
    '%s: read the replay, live events and the order’s end alike',
    async (transport) => {
      const orderId = `h2c-${transport}`;
      await app.createOwnedOrder(orderId, 'alice', OrderStatus.Paid);
      const made = clients(transport, alice());
      const outcomes = Promise.all(made.map(([, c]) => follow(c, orderId)));
      // Live events while both follow; the last one ends the order.
      for (const s of [OrderStatus.Packed, OrderStatus.Shipped, OrderStatus.Cancelled]) {
        await new Promise((r) => setTimeout(r, 30));
        await app.publish(orderId, s);
      }
      const [node, raw] = await outcomes;
      expect(node).toEqual(['open', ...[1, 2, 3, 4, 5].map((s) => `event ${s}`), 'end completed']);
      expect(raw).toEqual(node);
    },
  );

  it.each([
    ['longpoll-h2', 'another customer’s order', 'h2c-2', true, 'error http_404'],
    ['longpoll-h2', 'no token', 'h2c-1', false, 'error http_401'],
    ['sse-h2', 'another customer’s order', 'h2c-2', true, 'error http_404'],
    ['sse-h2', 'no token', 'h2c-1', false, 'error http_401'],
  ] as const)(
    '%s: read a refusal alike: %s',
    async (transport, _name, orderId, withToken, expected) => {
      const made = clients(transport, withToken ? alice() : undefined);
      const outcomes = await Promise.all(made.map(([, c]) => follow(c, orderId)));
      for (const [i, [name]] of made.entries())
        expect([name, outcomes[i]]).toEqual([name, [expected]]);
    },
  );
});
