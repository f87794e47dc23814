import type { ClientHttp2Session } from 'node:http2';
import { request } from 'undici';
import { OrderStatus, PROTO_STATUS } from '@app/order-domain';
import {
  collect,
  orderStatusClient,
  seqsOf,
  type OrderStatusClient,
} from './grpc/grpc-test-client';
import { h2Connect, h2Get } from './support/h2-client';
import { openSseH1, openSseH2 } from './support/sse-stream';
import { startTestApp, type TestApp } from './support/test-app';
import { WsStream } from './support/websocket-stream';
import { ClientPool, ended } from './ws/orders-client';

/** A real order's life: status changes, with tracking updates while it is on the road. */
const SCRIPT: readonly (OrderStatus | 'tracking')[] = [
  OrderStatus.Paid,
  OrderStatus.Packed,
  OrderStatus.Shipped,
  ...Array.from({ length: 10 }, () => 'tracking' as const),
  OrderStatus.OutForDelivery,
  ...Array.from({ length: 10 }, () => 'tracking' as const),
  OrderStatus.Delivered,
];
const EXPECTED = Array.from({ length: SCRIPT.length + 1 }, (_, i) => i + 1);
/** The kind of each seq: `status` for a status change, `tracking` for a tracking update. */
const KINDS = ['status', ...SCRIPT.map((s) => (s === 'tracking' ? 'tracking' : 'status'))];

interface PollBody {
  events: { seq: number; type: string }[];
  next: number;
  completed: boolean;
}

/**
 * The project's central promise: one scripted sequence for one order reaches every
 * transport at once, complete and in order, and every stream ends on the terminal status.
 */
describe('every transport at once', () => {
  let app: TestApp;
  let h2: ClientHttp2Session;
  let grpc: OrderStatusClient;
  const sockets = new ClientPool();

  beforeEach(async () => {
    app = await startTestApp();
    h2 = await h2Connect(app.httpsUrl, app.tlsCert);
    grpc = orderStatusClient(app.grpcAddress);
  });
  afterEach(async () => {
    await sockets.closeAll();
    grpc.close();
    h2.close();
    await app.close();
  });

  /** Follows the order by polling until it completes; `waitS` 0 is short-poll. */
  async function poll(
    get: (path: string) => Promise<string | undefined>,
    waitS: number,
  ): Promise<{ seqs: number[]; kinds: string[] }> {
    const seqs: number[] = [];
    const kinds: string[] = [];
    let after = 0;
    for (let i = 0; i < 500; i++) {
      const body = await get(`/v1/orders/all-1/events?after=${after}&wait=${waitS}`);
      if (body === undefined) {
        // 204: nothing new; a short-poll client waits its interval.
        if (waitS === 0) await new Promise((r) => setTimeout(r, 20));
        continue;
      }
      const parsed = JSON.parse(body) as PollBody;
      seqs.push(...parsed.events.map((e) => e.seq));
      kinds.push(...parsed.events.map((e) => e.type));
      after = parsed.next;
      if (parsed.completed) return { seqs, kinds };
    }
    throw new Error('poll did not complete');
  }
  const h1Get = async (path: string) => {
    const res = await request(`${app.httpUrl}${path}`, { headers: app.authHeaders });
    const text = await res.body.text();
    return res.statusCode === 204 ? undefined : text;
  };
  const h2GetBody = async (path: string) => {
    const res = await h2Get(h2, path);
    return res.status === 204 ? undefined : res.body;
  };

  it('delivers the same sequence complete and in order on gRPC, SSE (h1, h2), socket.io (websocket, polling), raw WebSocket, long-poll (h1, h2) and short-poll', async () => {
    await app.createOrder('all-1');
    const grpcCall = collect(grpc.subscribe({ orderId: 'all-1', afterSeq: 0 }));
    const sseH1 = await openSseH1(`${app.httpUrl}/v1/orders/all-1/stream`);
    const sseH2 = await openSseH2(h2, '/v1/orders/all-1/stream');
    const wsClient = await sockets.connect(app.httpUrl, { transport: 'websocket' });
    const pollingClient = await sockets.connect(app.httpUrl, { transport: 'polling' });
    const raw = await WsStream.open(`${app.httpUrl.replace(/^http/, 'ws')}/v1/orders/all-1/ws`, {
      headers: app.authHeaders,
    });
    await wsClient.subscribe('all-1', 0);
    await pollingClient.subscribe('all-1', 0);
    const polls = Promise.all([poll(h1Get, 5), poll(h2GetBody, 5), poll(h1Get, 0)]);

    for (const step of SCRIPT) {
      if (step === 'tracking') await app.track('all-1');
      else await app.publish('all-1', step);
      await new Promise((r) => setTimeout(r, 5));
    }

    expect((await grpcCall.status).code).toBe(0);
    expect(seqsOf(grpcCall.items)).toEqual(EXPECTED);
    expect(grpcCall.items.map((m) => ('tracking' in m ? 'tracking' : 'status'))).toEqual(KINDS);
    const lastGrpc = grpcCall.items.at(-1);
    expect(lastGrpc && 'event' in lastGrpc ? lastGrpc.event.status : undefined).toBe(
      PROTO_STATUS[OrderStatus.Delivered],
    );
    await Promise.all([sseH1.ended, sseH2.ended]);
    expect(sseH1.events().map((e) => e.seq)).toEqual(EXPECTED);
    expect(sseH2.events().map((e) => e.seq)).toEqual(EXPECTED);
    for (const sse of [sseH1, sseH2]) {
      const named = sse.messages.filter((m) => m.event === 'status' || m.event === 'tracking');
      expect(named.map((m) => m.event)).toEqual(KINDS);
      // The id is the seq for both kinds: a reconnect resumes after a tracking update too.
      expect(named.map((m) => Number(m.id))).toEqual(EXPECTED);
    }
    await wsClient.until(ended('all-1'), 'websocket end');
    await pollingClient.until(ended('all-1'), 'polling end');
    for (const client of [wsClient, pollingClient]) {
      expect(client.events('all-1').map((e) => e.seq)).toEqual(EXPECTED);
      expect(
        client.received.flatMap((r) =>
          r.type === 'status' || r.type === 'tracking' ? [r.type] : [],
        ),
      ).toEqual(KINDS);
    }
    expect(await raw.closed).toEqual({ code: 1000, reason: 'completed' });
    expect(raw.seqs()).toEqual(EXPECTED);
    expect(raw.frames.slice(0, -1).map((f) => f.type)).toEqual(KINDS);
    for (const answer of await polls) expect(answer).toEqual({ seqs: EXPECTED, kinds: KINDS });
  });
});
