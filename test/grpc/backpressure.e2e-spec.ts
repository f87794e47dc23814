import { status as GrpcCode } from '@grpc/grpc-js';
import { OrderStatus } from '@app/order-domain';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { collect, orderStatusClient, seqsOf, type OrderStatusClient } from './grpc-test-client';

const QUEUE_CAPACITY = 4;
const PADDING_BYTES = 16 * 1024;
const BATCHES = 60;
/** At most the queue's capacity per batch, so the fast reader never overflows its queue. */
const BATCH = QUEUE_CAPACITY;

describe('gRPC back-pressure', () => {
  let app: TestApp;
  const clients: OrderStatusClient[] = [];

  beforeEach(async () => {
    app = await startTestApp({ BUS_QUEUE_CAPACITY: String(QUEUE_CAPACITY) });
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await app.close();
  });

  // A local subchannel pool gives each client its own HTTP/2 connection (grpc-js shares
  // connections between channels with the same target and options by default), as two
  // separate consumers would have.
  const newClient = () => {
    const c = orderStatusClient(app.grpcAddress, { 'grpc.use_local_subchannel_pool': 1 });
    clients.push(c);
    return c;
  };

  it('a consumer that stops reading does not delay a fast one; its queue stays bounded', async () => {
    await app.createOrder('bp-1');
    const slowCall = newClient().subscribe({ orderId: 'bp-1' });
    const slow = collect(slowCall, 30_000);
    await waitFor(() => slow.items.length === 1, 'slow stream open');
    // Stop reading: grpc-js stops taking messages off the HTTP/2 stream, the stream's
    // flow-control window fills, and the server's call.write() starts returning false.
    slowCall.pause();
    const fast = collect(newClient().subscribe({ orderId: 'bp-1' }), 30_000);
    await waitFor(() => fast.items.length === 1, 'fast stream open');

    const started = Date.now();
    let published = 1;
    for (let b = 0; b < BATCHES; b++) {
      for (let i = 0; i < BATCH; i++) await app.progress('bp-1', PADDING_BYTES);
      published += BATCH;
      await waitFor(() => fast.items.length === published, `fast reader got seq ${published}`);
    }
    const fastMs = Date.now() - started;
    await app.publish('bp-1', OrderStatus.Delivered);
    published++;

    expect((await fast.status).code).toBe(GrpcCode.OK);
    expect(seqsOf(fast.items)).toEqual(Array.from({ length: published }, (_, i) => i + 1));
    // ~3.9 MB through the fast stream while the slow one sat full.
    expect(fastMs).toBeLessThan(10_000);

    // The slow subscriber was held back by its transport, not buffered without bound:
    // its queue overflowed (conflate) and it was handed only a small part of the events.
    const overflows = app.bus.stats.overflows.conflate;
    expect(overflows).toBeGreaterThan(0);
    expect(app.bus.stats.overflowDropped.conflate).toBeGreaterThan(published / 2);
    const slowHandedOver = (app.bus.stats.deliveredByTransport.get('grpc') ?? 0) - published;
    expect(slowHandedOver).toBeLessThan(published / 2);
    expect(slow.items.length).toBeLessThan(published);

    // Once it reads again it catches up to the newest status, and the stream ends OK.
    slowCall.resume();
    expect((await slow.status).code).toBe(GrpcCode.OK);
    const slowSeqs = seqsOf(slow.items);
    expect(slowSeqs[slowSeqs.length - 1]).toBe(published);
    expect([...slowSeqs].sort((a, b) => a - b)).toEqual(slowSeqs);
    expect(new Set(slowSeqs).size).toBe(slowSeqs.length);
    await waitFor(() => app.bus.subscriberCount() === 0, 'both subscriptions released');
  });
});
