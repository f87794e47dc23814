import {
  itemOf,
  ORDER_DOMAIN,
  OrderStatus,
  streamItemToProto,
  type OrderStatusChanged,
} from '@app/order-domain';
import { loadSync, type MethodDefinition } from '@grpc/proto-loader';
import {
  ORDER_STATUS_PROTO_PACKAGE,
  ORDER_STATUS_PROTO_PATH,
  ORDER_STATUS_SERVICE_NAME,
  PROTO_LOADER_OPTIONS,
} from '@app/contracts';
import { StreamEventBus } from '@app/event-bus';
import { SUBSCRIBE_ENCODING } from '../../apps/order-status/src/transports/grpc/subscribe-encoding';
import { pollEventJson } from '../../apps/order-status/src/transports/long-poll/poll-answer';
import { sseFrames } from '../../apps/order-status/src/transports/sse/sse-frames';
import { SocketPackets } from '../../apps/order-status/src/transports/ws/socket-packets';
import {
  collect,
  orderStatusClient,
  seqsOf,
  type OrderStatusClient,
} from '../grpc/grpc-test-client';
import { openSseH1, type SseStream } from '../support/sse-stream';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { ClientPool, reached, type RecordingClient } from '../ws/orders-client';

/**
 * One event to many subscribers of one order is encoded once per wire format, and every
 * subscriber still gets exactly the bytes the per-subscriber encoding produced.
 */
const PER_TRANSPORT = 20;
const ORDER = 'encode-once-1';

describe('encode once per event per wire format', () => {
  let app: TestApp;
  const pool = new ClientPool();
  const sse: SseStream[] = [];
  const grpc: OrderStatusClient[] = [];

  beforeAll(async () => {
    app = await startTestApp();
  });

  afterAll(async () => {
    for (const s of sse) s.close();
    for (const c of grpc) c.close();
    await pool.closeAll();
    await app.close();
  });

  it('SSE, socket.io, gRPC and long-poll: one encoding each, the same bytes as before', async () => {
    await app.createOrder(ORDER);
    const url = `${app.httpUrl}/v1/orders/${ORDER}`;

    for (let i = 0; i < PER_TRANSPORT; i++) sse.push(await openSseH1(`${url}/stream`));
    const sockets: RecordingClient[] = [];
    for (let i = 0; i < PER_TRANSPORT; i++) {
      const c = await pool.connect(app.httpUrl);
      await c.subscribe(ORDER);
      sockets.push(c);
    }
    const calls = Array.from({ length: PER_TRANSPORT }, () => {
      const client = orderStatusClient(app.grpcAddress);
      grpc.push(client);
      return collect(client.subscribe({ orderId: ORDER, afterSeq: 0 }));
    });
    // Every stream has its replayed `created` before the event is published.
    await waitFor(
      () =>
        sse.every((s) => s.events().length === 1) &&
        sockets.every((c) => reached(ORDER, 1)(c.received)) &&
        calls.every((c) => seqsOf(c.items).length === 1),
      'every stream has the created event',
    );
    // Long-polls held after seq 1: they are answered by the event.
    const polls = Array.from({ length: PER_TRANSPORT }, () =>
      fetch(`${url}/events?after=1&wait=10`, { headers: app.authHeaders }).then((r) => r.text()),
    );
    // Every poll is held (a waiting poll holds a bus subscription) before the publish.
    const bus = app.app.get(StreamEventBus);
    await waitFor(() => bus.subscriberCount(ORDER) === 4 * PER_TRANSPORT, 'every long-poll held');

    const before = {
      sse: sseFrames(ORDER_DOMAIN).encodings,
      ws: SocketPackets.encodingsTotal,
      grpc: SUBSCRIBE_ENCODING.encodings,
      longPoll: pollEventJson(ORDER_DOMAIN).encodings,
    };
    const published: OrderStatusChanged = await app.publish(ORDER, OrderStatus.Paid);

    await waitFor(
      () =>
        sse.every((s) => s.events().length === 2) &&
        sockets.every((c) => reached(ORDER, 2)(c.received)) &&
        calls.every((c) => seqsOf(c.items).length === 2),
      'every stream has the published event',
    );
    const bodies = await Promise.all(polls);

    expect({
      sse: sseFrames(ORDER_DOMAIN).encodings - before.sse,
      ws: SocketPackets.encodingsTotal - before.ws,
      grpc: SUBSCRIBE_ENCODING.encodings - before.grpc,
      longPoll: pollEventJson(ORDER_DOMAIN).encodings - before.longPoll,
    }).toEqual({ sse: 1, ws: 1, grpc: 1, longPoll: 1 });

    // The bytes each subscriber got are those of the per-subscriber encoding.
    const frame = `id: 2\nevent: status\ndata: ${JSON.stringify(published)}\n\n`;
    for (const s of sse) expect(s.body().endsWith(frame)).toBe(true);
    for (const c of sockets) expect(c.statuses(ORDER).at(-1)).toEqual(published);
    // gRPC: what the client decodes equals the decoding of the plain serializer's bytes.
    const plain = loadSync(ORDER_STATUS_PROTO_PATH, PROTO_LOADER_OPTIONS)[
      `${ORDER_STATUS_PROTO_PACKAGE}.${ORDER_STATUS_SERVICE_NAME}`
    ] as Record<string, MethodDefinition<object, object>>;
    const expected = plain.Subscribe.responseDeserialize(
      plain.Subscribe.responseSerialize(streamItemToProto(itemOf(published))),
    );
    for (const c of calls) expect(c.items.at(-1)).toEqual(expected);
    const body = JSON.stringify({
      orderId: ORDER,
      events: [{ type: 'status', ...published }],
      next: 2,
      completed: false,
    });
    for (const b of bodies) expect(b).toBe(body);
  });
});
