import { OrderStatus } from '@app/order-domain';
import { RedisServer } from '../support/redis-server';
import { startTestApp, type TestApp } from '../support/test-app';
import { WsStream } from '../support/websocket-stream';

const { Paid, Packed, Shipped, Delivered } = OrderStatus;
const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Tracking updates published on A while B drains and the client moves to A. */
const DURING_MOVE = 10;

/**
 * The raw WebSocket transport on two instances sharing one private Redis: a client on B
 * gets what is published on A; when B shuts down (1012 with reconnect advice) while A
 * keeps publishing, the client resumes on A by seq (`?after=`) with nothing lost and
 * nothing twice. Both instances keep a 4-event ring, so the resume is served from
 * Redis history.
 */
describe('raw WebSocket across two instances sharing Redis', () => {
  let redis: RedisServer;
  let a: TestApp;
  let b: TestApp | undefined;
  const streams: WsStream[] = [];

  beforeAll(async () => {
    redis = await RedisServer.launch();
    a = await startTestApp({ REDIS_URL: redis.url, BUS_RING_SIZE: '4' });
    b = await startTestApp({ REDIS_URL: redis.url, BUS_RING_SIZE: '4' });
  });
  afterAll(async () => {
    for (const s of streams.splice(0)) s.close();
    await a?.close();
    await b?.close();
    await redis?.shutdown();
  });

  const open = async (app: TestApp, path: string): Promise<WsStream> => {
    const s = await WsStream.open(`${app.httpUrl.replace(/^http/, 'ws')}${path}`, {
      headers: app.authHeaders,
    });
    streams.push(s);
    return s;
  };

  it('publish on A reaches a client on B; B shuts down, the client resumes on A: 0 lost, 0 twice', async () => {
    const instanceB = b as TestApp;
    await a.createOrder('wx1');
    const onB = await open(instanceB, '/v1/orders/wx1/ws');
    await onB.until((f) => f.length === 1, 'the replayed created event on B');
    for (const s of [Paid, Packed, Shipped]) await a.publish('wx1', s);
    for (let i = 0; i < 6; i++) await a.track('wx1');
    await onB.until((f) => f.length === 10, 'ten events from A on B');
    expect(onB.seqs()).toEqual(range(1, 10));

    // B drains while A goes on publishing: some of these may still reach the client on
    // B, the rest only through the resume.
    const closing = instanceB.close();
    b = undefined;
    const publishing = (async () => {
      for (let i = 0; i < DURING_MOVE; i++) await a.track('wx1');
    })();
    expect(await onB.closed).toEqual({ code: 1012, reason: 'shutdown' });
    expect(onB.frames.at(-1)).toEqual({
      type: 'end',
      data: { reason: 'shutdown', retryAfterMs: expect.any(Number) },
    });
    await closing;
    const lastOnB = onB.seqs().at(-1) as number;

    const onA = await open(a, `/v1/orders/wx1/ws?after=${lastOnB}`);
    await publishing;
    await a.publish('wx1', Delivered);
    expect(await onA.closed).toEqual({ code: 1000, reason: 'completed' });
    const all = [...onB.seqs(), ...onA.seqs()];
    const last = 10 + DURING_MOVE + 1;
    // Every seq exactly once, in order, across both instances.
    expect(all).toEqual(range(1, last));
    expect(onA.of('reset')).toEqual([]);
    expect(onA.of('skipped')).toEqual([]);
    console.log(`websocket: ${onB.seqs().length} on B, ${onA.seqs().length} resumed on A`);
  });
});
