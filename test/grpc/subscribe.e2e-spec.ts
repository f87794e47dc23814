import { status as GrpcCode } from '@grpc/grpc-js';
import { StreamEndReason, StreamEndTrailer } from '@app/contracts';
import { OrderStatus, PROTO_STATUS } from '@app/order-domain';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import {
  collect,
  deadlineIn,
  orderStatusClient,
  seqsOf,
  type OrderStatusClient,
} from './grpc-test-client';

const REASON_BEYOND_RETENTION = 1;
const REASON_AHEAD_OF_LAST_SEQ = 2;

const LIFE_CYCLE = [
  OrderStatus.Paid,
  OrderStatus.Packed,
  OrderStatus.Shipped,
  OrderStatus.OutForDelivery,
  OrderStatus.Delivered,
];

describe('gRPC Subscribe', () => {
  let app: TestApp;
  let client: OrderStatusClient;

  beforeEach(async () => {
    app = await startTestApp();
    client = orderStatusClient(app.grpcAddress);
  });
  afterEach(async () => {
    client.close();
    await app.close();
  });

  it('delivers a scripted life cycle complete and in order, then ends OK', async () => {
    await app.createOrder('life-1');
    const stream = collect(client.subscribe({ orderId: 'life-1' }));
    // The replayed `created` event proves the subscription is live before publishing.
    await waitFor(() => stream.items.length === 1, 'replayed created event');
    for (const s of LIFE_CYCLE) await app.publish('life-1', s);

    const status = await stream.status;
    expect(status.code).toBe(GrpcCode.OK);
    expect(seqsOf(stream.items)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(stream.items.map((m) => ('event' in m ? m.event.status : undefined))).toEqual(
      [OrderStatus.Created, ...LIFE_CYCLE].map((s) => PROTO_STATUS[s]),
    );
    expect(stream.items[0]).toMatchObject({ event: { orderId: 'life-1', seq: 1 } });
    await waitFor(() => app.bus.subscriberCount() === 0, 'subscription released');
    expect(app.bus.stats.connectionsByTransport.get('grpc')).toBe(0);
  });

  it('resumes from a middle seq: the rest arrives once, nothing twice', async () => {
    await app.createOrder('resume-1', OrderStatus.Paid, OrderStatus.Packed, OrderStatus.Shipped);
    const stream = collect(client.subscribe({ orderId: 'resume-1', afterSeq: 2 }));
    await waitFor(() => stream.items.length === 2, 'replayed seq 3 and 4');
    await app.publish('resume-1', OrderStatus.OutForDelivery);
    await app.publish('resume-1', OrderStatus.Delivered);

    expect((await stream.status).code).toBe(GrpcCode.OK);
    expect(seqsOf(stream.items)).toEqual([3, 4, 5, 6]);
  });

  it('resuming a finished order replays what is left and ends OK at once', async () => {
    await app.createOrder('done-1', OrderStatus.Cancelled);
    const stream = collect(client.subscribe({ orderId: 'done-1', afterSeq: 1 }));
    expect((await stream.status).code).toBe(GrpcCode.OK);
    expect(seqsOf(stream.items)).toEqual([2]);
  });

  it('after_seq ahead of the last seq gets a reset (AHEAD_OF_LAST_SEQ) with the snapshot', async () => {
    await app.createOrder('ahead-1', OrderStatus.Paid);
    const call = client.subscribe({ orderId: 'ahead-1', afterSeq: 100 });
    const stream = collect(call);
    await waitFor(() => stream.items.length === 1, 'reset');
    expect(stream.items[0]).toMatchObject({
      reset: {
        reason: REASON_AHEAD_OF_LAST_SEQ,
        snapshot: { orderId: 'ahead-1', lastSeq: 2, status: PROTO_STATUS[OrderStatus.Paid] },
      },
    });
    // After the reset the stream continues live from the snapshot's seq.
    await app.publish('ahead-1', OrderStatus.Packed);
    await waitFor(() => stream.items.length === 2, 'live event after the reset');
    expect(seqsOf(stream.items)).toEqual([3]);
    call.cancel();
    expect((await stream.status).code).toBe(GrpcCode.CANCELLED);
  });

  it('publishes racing a subscribe: no gap, no duplicate (many iterations)', async () => {
    const ITERATIONS = 40;
    const EVENTS = 12;
    for (let i = 0; i < ITERATIONS; i++) {
      const orderId = `race-${i}`;
      await app.createOrder(orderId);
      const afterSeq = i % 2; // from the start, and a resume from seq 1
      // Publish one event per macrotask while the Subscribe request is in flight, so
      // the bus's replay and live paths interleave differently on every iteration.
      const publishing = (async () => {
        for (let n = 0; n < EVENTS; n++) {
          await app.progress(orderId);
          await new Promise((r) => setImmediate(r));
        }
        await app.publish(orderId, OrderStatus.Delivered);
      })();
      const stream = collect(client.subscribe({ orderId, afterSeq }));
      await publishing;
      expect((await stream.status).code).toBe(GrpcCode.OK);
      const lastSeq = EVENTS + 2;
      const expected = Array.from({ length: lastSeq - afterSeq }, (_, k) => afterSeq + 1 + k);
      expect(seqsOf(stream.items)).toEqual(expected);
    }
    await waitFor(() => app.bus.subscriberCount() === 0, 'every subscription released');
    // Both paths really raced: some events reached clients by replay, others live.
    const delivered = ITERATIONS * (EVENTS + 2) - ITERATIONS / 2;
    expect(app.bus.stats.eventsReplayed).toBeGreaterThan(0);
    expect(app.bus.stats.eventsReplayed).toBeLessThan(delivered);
  });

  it('a client cancel releases the bus subscription at once', async () => {
    await app.createOrder('cancel-1');
    const call = client.subscribe({ orderId: 'cancel-1' });
    const stream = collect(call);
    await waitFor(() => stream.items.length === 1, 'first event');
    expect(app.bus.subscriberCount('cancel-1')).toBe(1);
    expect(app.bus.stats.connectionsByTransport.get('grpc')).toBe(1);

    call.cancel();
    expect((await stream.status).code).toBe(GrpcCode.CANCELLED);
    await waitFor(() => app.bus.subscriberCount() === 0, 'subscriber released after cancel');
    expect(app.bus.stats.connectionsByTransport.get('grpc')).toBe(0);
    expect(app.bus.stats.subscriptionsByTransport.get('grpc')).toBe(0);
  });

  it("ends with DEADLINE_EXCEEDED at the client's deadline and releases the subscription", async () => {
    await app.createOrder('deadline-1');
    const DEADLINE_MS = 400;
    const started = Date.now();
    const stream = collect(
      client.subscribe({ orderId: 'deadline-1' }, { deadline: deadlineIn(DEADLINE_MS) }),
    );
    await waitFor(() => stream.items.length === 1, 'first event');
    expect(app.bus.subscriberCount('deadline-1')).toBe(1);

    const status = await stream.status;
    const elapsed = Date.now() - started;
    expect(status.code).toBe(GrpcCode.DEADLINE_EXCEEDED);
    expect(elapsed).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    expect(elapsed).toBeLessThan(DEADLINE_MS + 1_000);
    // The server side ended too (grpc-js's own deadline timer), not only the client.
    await waitFor(() => app.bus.subscriberCount() === 0, 'subscriber released at the deadline');
    expect(app.bus.stats.connectionsByTransport.get('grpc')).toBe(0);
  });

  it('ends a stream the service shuts down with UNAVAILABLE naming the reason', async () => {
    await app.createOrder('shutdown-1', OrderStatus.Paid);
    const stream = collect(client.subscribe({ orderId: 'shutdown-1' }));
    await waitFor(() => stream.items.length === 2, 'replay');
    app.bus.endAll(StreamEndReason.Shutdown);
    const status = await stream.status;
    expect(status.code).toBe(GrpcCode.UNAVAILABLE);
    expect(status.details).toContain('shutdown');
    expect(status.details).toContain('after_seq=2');
    // Machine-readable in the trailers: no parsing of the details text needed.
    expect(status.metadata.get(StreamEndTrailer.Reason)).toEqual(['shutdown']);
    expect(status.metadata.get(StreamEndTrailer.ResumeAfterSeq)).toEqual(['2']);
    expect(app.bus.subscriberCount()).toBe(0);
  });
});

describe('gRPC Subscribe with a small replay ring', () => {
  let app: TestApp;
  let client: OrderStatusClient;

  beforeEach(async () => {
    app = await startTestApp({ BUS_RING_SIZE: '4' });
    client = orderStatusClient(app.grpcAddress);
  });
  afterEach(async () => {
    client.close();
    await app.close();
  });

  it('a resume point older than retention gets a reset (BEYOND_RETENTION) and the snapshot', async () => {
    await app.createOrder('old-1');
    for (let i = 0; i < 7; i++) await app.progress('old-1');
    const call = client.subscribe({ orderId: 'old-1', afterSeq: 1 });
    const stream = collect(call);
    await waitFor(() => stream.items.length === 1, 'reset');
    expect(stream.items[0]).toMatchObject({
      reset: {
        reason: REASON_BEYOND_RETENTION,
        snapshot: { orderId: 'old-1', lastSeq: 8, status: PROTO_STATUS[OrderStatus.Shipped] },
      },
    });
    await app.publish('old-1', OrderStatus.Delivered);
    expect((await stream.status).code).toBe(GrpcCode.OK);
    expect(seqsOf(stream.items)).toEqual([9]);

    // Within retention (the last 4 events) the same order resumes without a reset.
    const again = collect(client.subscribe({ orderId: 'old-1', afterSeq: 6 }));
    expect((await again.status).code).toBe(GrpcCode.OK);
    expect(seqsOf(again.items)).toEqual([7, 8, 9]);
    expect(again.items.some((m) => 'reset' in m && m.reset)).toBe(false);
  });
});
