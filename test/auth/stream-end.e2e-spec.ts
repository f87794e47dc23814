import { Metadata, status as GrpcCode, type StatusObject } from '@grpc/grpc-js';
import { request } from 'undici';
import { OrderStatus } from '@app/order-domain';
import {
  collect,
  orderStatusClient,
  seqsOf,
  type OrderStatusClient,
} from '../grpc/grpc-test-client';
import { openSseH1 } from '../support/sse-stream';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { WsStream, type Closed } from '../support/websocket-stream';
import { ClientPool, type RecordingClient } from '../ws/orders-client';

const TOTAL = 40;

/** Publishes TOTAL-1 events after `created`, paced, then delivers the order. */
async function publishPaced(app: TestApp, orderId: string, gapMs: number): Promise<void> {
  for (let i = 0; i < TOTAL - 2; i++) {
    await app.progress(orderId);
    await new Promise((r) => setTimeout(r, gapMs));
  }
  await app.publish(orderId, OrderStatus.Delivered);
}

const ALL = Array.from({ length: TOTAL }, (_, i) => i + 1);

/**
 * Streams that end on purpose, and clients that resume: a token expiring mid-stream ends
 * the stream with a reason distinct from a network failure on each transport, and a
 * resume with a fresh token loses nothing; the same for the maximum stream age on gRPC
 * socket.io and the raw WebSocket (SSE is covered in test/sse).
 */
describe.each([
  // 2 s, not 1: `exp` is in whole seconds, so a token minted at X.999 s with a 1 s lifetime
  // has 1 ms left and the next call could already be refused (a flake seen in CI). With
  // 2 s every token lives over 1 s, and publishing (~2.4 s) still outlasts the first one.
  ['token expiry', { AUTH_CLOCK_TOLERANCE_S: '0' }, 'token_expired', 2],
  [
    'maximum stream age',
    { STREAM_MAX_AGE_MS: '400', STREAM_MAX_AGE_JITTER_MS: '0' },
    'max_age',
    3600,
  ],
] as const)('%s', (_title, env, reason, ttlS) => {
  let app: TestApp;
  let grpc: OrderStatusClient;
  const pool = new ClientPool();

  beforeEach(async () => {
    app = await startTestApp(env);
    grpc = orderStatusClient(app.grpcAddress, {}, null);
  });
  afterEach(async () => {
    await pool.closeAll();
    grpc.close();
    await app.close();
  });

  /** A fresh short-lived token for alice (a customer reading her own order). */
  const token = () => app.token({ sub: 'alice', scopes: ['orders:read'], ttlS });

  it('SSE: ends with an `end` event naming the reason; resuming with a fresh token loses nothing', async () => {
    await app.createOwnedOrder('se-sse', 'alice');
    const publishing = publishPaced(app, 'se-sse', 60);
    const seen: number[] = [];
    const reasons: string[] = [];
    let after = 0;
    for (let round = 0; round < 20 && !reasons.includes('completed'); round++) {
      const s = await openSseH1(`${app.httpUrl}/v1/orders/se-sse/stream?after=${after}`, {
        authorization: `Bearer ${token()}`,
      });
      expect(s.status).toBe(200);
      await s.ended;
      seen.push(...s.events().map((e) => e.seq));
      after = seen.at(-1) ?? after;
      const end = s.messages.find((m) => m.event === 'end');
      if (end) reasons.push((JSON.parse(end.data) as { reason: string }).reason);
    }
    await publishing;
    expect(seen).toEqual(ALL);
    expect(reasons).toContain(reason);
    expect(reasons.at(-1)).toBe('completed');
  });

  it('gRPC: ends with a distinct status; resuming with a fresh token loses nothing', async () => {
    await app.createOwnedOrder('se-grpc', 'alice');
    const publishing = publishPaced(app, 'se-grpc', 60);
    const seen: number[] = [];
    const statuses: StatusObject[] = [];
    for (let round = 0; round < 20 && statuses.at(-1)?.code !== GrpcCode.OK; round++) {
      const md = new Metadata();
      md.set('authorization', `Bearer ${token()}`);
      const subscribe = grpc.subscribe.bind(grpc) as unknown as (
        req: object,
        md: Metadata,
      ) => ReturnType<OrderStatusClient['subscribe']>;
      const c = collect(subscribe({ orderId: 'se-grpc', afterSeq: seen.at(-1) ?? 0 }, md));
      statuses.push(await c.status);
      seen.push(...seqsOf(c.items));
    }
    await publishing;
    expect(seen).toEqual(ALL);
    // token_expired: UNAUTHENTICATED (retrying the same token cannot work); max_age:
    // UNAVAILABLE (retry). Both name the reason and the resume point in the details.
    const ended = statuses.slice(0, -1);
    expect(ended.length).toBeGreaterThan(0);
    for (const s of ended) {
      expect(s.code).toBe(reason === 'token_expired' ? 16 : 14);
      expect(s.details).toContain(`(${reason})`);
    }
  });

  it('socket.io: `end` with the reason per order; resuming with a fresh token loses nothing', async () => {
    await app.createOwnedOrder('se-ws', 'alice');
    const publishing = publishPaced(app, 'se-ws', 60);
    const seen: number[] = [];
    const reasons: string[] = [];
    const disconnects: string[] = [];
    for (let round = 0; round < 20 && !reasons.includes('completed'); round++) {
      const c: RecordingClient = await pool.connect(app.httpUrl, { token: token() });
      c.socket.on('disconnect', (why) => disconnects.push(why));
      const ack = await c.subscribe('se-ws', seen.at(-1) ?? 0);
      expect(ack.ok).toBe(true);
      await c.until((r) => r.some((x) => x.type === 'end'), 'end', 10_000);
      seen.push(...c.events('se-ws').map((e) => e.seq));
      for (const r of c.received) if (r.type === 'end') reasons.push(r.end.reason);
      c.socket.disconnect();
    }
    await publishing;
    expect(seen).toEqual(ALL);
    expect(reasons).toContain(reason);
    // On token expiry the server also closes the socket itself, after the `end`s.
    if (reason === 'token_expired') expect(disconnects).toContain('io server disconnect');
  });

  it('raw WebSocket: `end` with the reason and its close code; resuming with a fresh token loses nothing', async () => {
    await app.createOwnedOrder('se-raw', 'alice');
    const publishing = publishPaced(app, 'se-raw', 60);
    const seen: number[] = [];
    const closes: Closed[] = [];
    for (let round = 0; round < 20 && closes.at(-1)?.reason !== 'completed'; round++) {
      const s = await WsStream.open(
        `${app.httpUrl.replace(/^http/, 'ws')}/v1/orders/se-raw/ws?after=${seen.at(-1) ?? 0}`,
        { headers: { authorization: `Bearer ${token()}` } },
      );
      closes.push(await s.closed);
      seen.push(...s.seqs());
      expect(s.of('end')).toEqual([{ reason: closes.at(-1)?.reason }]);
    }
    await publishing;
    expect(seen).toEqual(ALL);
    // token_expired: 4401 (renew the token first); max_age: 1001 (going away: resume now).
    expect(closes).toContainEqual({ code: reason === 'token_expired' ? 4401 : 1001, reason });
    expect(closes.at(-1)).toEqual({ code: 1000, reason: 'completed' });
  });

  if (reason === 'token_expired') {
    it('long-poll: never holds past the token, and the same token is then refused', async () => {
      await app.createOwnedOrder('se-lp', 'alice');
      const t = token();
      const started = Date.now();
      const res = await request(`${app.httpUrl}/v1/orders/se-lp/events?after=1&wait=30`, {
        headers: { authorization: `Bearer ${t}` },
      });
      expect(res.statusCode).toBe(204);
      expect(Date.now() - started).toBeLessThan(3_000);
      await waitFor(async () => {
        const again = await request(`${app.httpUrl}/v1/orders/se-lp/events?after=1&wait=0`, {
          headers: { authorization: `Bearer ${t}` },
        });
        return again.statusCode === 401;
      }, 'expired token refused');
    });
  }
});
