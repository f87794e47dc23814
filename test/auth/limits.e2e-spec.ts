import { Metadata } from '@grpc/grpc-js';
import { request } from 'undici';
import { ErrorCode } from '@app/contracts';
import { OrderStatus } from '@app/order-domain';
import {
  collect,
  orderStatusClient,
  seqsOf,
  type OrderStatusClient,
} from '../grpc/grpc-test-client';
import { openSseH1, type SseStream } from '../support/sse-stream';
import { waitFor } from '../support/wait-for';
import { startTestApp, type TestApp } from '../support/test-app';
import { ClientPool } from '../ws/orders-client';
import { Attempts } from './attempts';

/**
 * Each limit, crossed: its typed error (resource_exhausted: 429, RESOURCE_EXHAUSTED, the
 * socket.io error) while the streams already open, and other principals, keep receiving.
 */
describe('limits', () => {
  let app: TestApp;
  let attempts: Attempts;
  let grpc: OrderStatusClient;
  const pool = new ClientPool();
  const streams: SseStream[] = [];

  beforeEach(async () => {
    app = await startTestApp({
      LIMIT_CONNECTIONS_PER_PRINCIPAL: '2',
      WS_MAX_SUBSCRIPTIONS_PER_SOCKET: '2',
      LIMIT_PUBLISH_PER_WINDOW: '3',
      LIMIT_PUBLISH_WINDOW_MS: '60000',
    });
    attempts = new Attempts(app);
    grpc = orderStatusClient(app.grpcAddress, {}, null);
  });
  afterEach(async () => {
    for (const s of streams.splice(0)) s.close();
    await pool.closeAll();
    grpc.close();
    await attempts.close();
    await app.close();
  });

  it('open streams per principal, across transports', async () => {
    await app.createOwnedOrder('lim-a', 'alice');
    await app.createOwnedOrder('lim-b', 'bob');
    const alice = app.token({ sub: 'alice', scopes: ['orders:read'] });
    const bob = app.token({ sub: 'bob', scopes: ['orders:read'] });
    // Alice's two slots: an SSE stream and a socket.io connection.
    const sse = await openSseH1(`${app.httpUrl}/v1/orders/lim-a/stream`, {
      authorization: `Bearer ${alice}`,
    });
    streams.push(sse);
    const ws = await pool.connect(app.httpUrl, { token: alice });
    expect((await ws.subscribe('lim-a')).ok).toBe(true);
    const bobStream = await openSseH1(`${app.httpUrl}/v1/orders/lim-b/stream`, {
      authorization: `Bearer ${bob}`,
    });
    streams.push(bobStream);

    for (const transport of [
      'sse',
      'long-poll',
      'grpc-subscribe',
      'ws-websocket',
      'ws-polling',
    ] as const) {
      const outcome = await attempts.run(transport, 'lim-a', alice, 0);
      expect([transport, outcome.code, outcome.events]).toEqual([
        transport,
        ErrorCode.ResourceExhausted,
        0,
      ]);
    }
    const third = await attempts.run('sse', 'lim-a', alice);
    expect(third.status).toBe(429);

    await app.publish('lim-a', OrderStatus.Paid);
    await app.publish('lim-b', OrderStatus.Paid);
    await sse.waitFor(() => sse.events().length === 2, 'alice SSE keeps receiving');
    await ws.until(() => ws.statuses('lim-a').length === 2, 'alice socket keeps receiving');
    await bobStream.waitFor(() => bobStream.events().length === 2, 'bob keeps receiving');

    // A slot comes back when a stream closes.
    sse.close();
    const md = new Metadata();
    md.set('authorization', `Bearer ${alice}`);
    let code = 0;
    for (let i = 0; i < 50; i++) {
      const subscribe = grpc.subscribe.bind(grpc) as unknown as (
        req: object,
        md: Metadata,
      ) => ReturnType<OrderStatusClient['subscribe']>;
      const call = subscribe({ orderId: 'lim-a', afterSeq: 0 }, md);
      const c = collect(call);
      // Refused (the slot is not back yet: the status comes) or open (the replay comes).
      // Waiting for either, not a fixed time: a busy CI host can take longer than any
      // sleep to send the replay of a stream that did open.
      let settled = false;
      void c.status.then(() => (settled = true));
      await waitFor(() => settled || c.items.length >= 2, 'refused, or the replay', 5_000);
      call.cancel();
      const status = await c.status;
      code = status.code;
      if (code === 1) {
        expect(seqsOf(c.items)).toEqual([1, 2]);
        break;
      }
      expect(code).toBe(8); // RESOURCE_EXHAUSTED: try again
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(code).toBe(1); // CANCELLED by us: the stream had opened
  });

  it('subscriptions per socket.io connection (WS_MAX_SUBSCRIPTIONS_PER_SOCKET)', async () => {
    for (const id of ['s-1', 's-2', 's-3']) await app.createOrder(id);
    const c = await pool.connect(app.httpUrl);
    expect((await c.subscribe('s-1')).ok).toBe(true);
    expect((await c.subscribe('s-2')).ok).toBe(true);
    expect(await c.subscribe('s-3')).toMatchObject({
      ok: false,
      error: { code: ErrorCode.ResourceExhausted },
    });
    await app.publish('s-1', OrderStatus.Paid);
    await c.until(() => c.statuses('s-1').length === 2, 's-1 keeps flowing');
  });

  it('publish rate per principal, REST and gRPC sharing one bucket', async () => {
    await app.createOrder('p-1', OrderStatus.Shipped);
    const writer = app.token({ sub: 'writer', scopes: ['orders:write'] });
    const other = app.token({ sub: 'other-writer', scopes: ['orders:write'] });
    const watcher = await openSseH1(`${app.httpUrl}/v1/orders/p-1/stream`);
    streams.push(watcher);
    const outcomes = [];
    for (let i = 0; i < 3; i++) outcomes.push((await attempts.run('publish', 'p-1', writer)).code);
    outcomes.push((await attempts.run('publish', 'p-1', writer)).code);
    outcomes.push((await attempts.run('grpc-publish', 'p-1', writer)).code);
    expect(outcomes).toEqual([
      'ok',
      'ok',
      'ok',
      ErrorCode.ResourceExhausted,
      ErrorCode.ResourceExhausted,
    ]);
    const res = await request(`${app.httpUrl}/v1/orders/p-1/status`, {
      method: 'POST',
      headers: { authorization: `Bearer ${writer}`, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'paid' }),
    });
    expect(res.statusCode).toBe(429);
    expect(await res.body.json()).toMatchObject({ error: { code: 'resource_exhausted' } });
    // Another principal still publishes, and subscribers still receive.
    expect((await attempts.run('publish', 'p-1', other)).code).toBe('ok');
    await watcher.waitFor(() => watcher.events().length === 5, 'subscriber keeps receiving');
  });
});
