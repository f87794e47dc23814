import { status as GrpcCode } from '@grpc/grpc-js';
import { publishPayload } from '@app/payload-domain';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { collect, orderStatusClient, seqsOf, type OrderStatusClient } from './grpc-test-client';

const QUEUE_CAPACITY = 4;
const PAYLOAD_BYTES = 16 * 1024;
const BATCHES = 60;
/** At most the queue's capacity per batch, so the fast reader never overflows its queue. */
const BATCH = QUEUE_CAPACITY;

describe('gRPC back-pressure', () => {
  let app: TestApp;
  const clients: OrderStatusClient[] = [];

  beforeEach(async () => {
    app = await startTestApp({
      BUS_QUEUE_CAPACITY: String(QUEUE_CAPACITY),
      // Events of a chosen size are the load test's own domain's, not the order's.
      STREAM_DOMAIN: 'payload',
    });
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
    const publish = (bytes: number) => publishPayload(app.store, { orderId: 'bp-1', bytes });
    await publish(0);
    const slowCall = newClient().subscribe({ orderId: 'bp-1' });
    const slow = collect(slowCall, 30_000);
    await waitFor(() => slow.items.length === 1, 'slow stream open');
    // Stop reading: grpc-js stops taking messages off the HTTP/2 stream, the stream's
    // flow-control window fills, and the server's call.write() starts returning false.
    slowCall.pause();
    const fastCall = newClient().subscribe({ orderId: 'bp-1' });
    const fast = collect(fastCall, 30_000);
    await waitFor(() => fast.items.length === 1, 'fast stream open');

    const started = Date.now();
    let published = 1;
    for (let b = 0; b < BATCHES; b++) {
      for (let i = 0; i < BATCH; i++) await publish(PAYLOAD_BYTES);
      published += BATCH;
      await waitFor(() => fast.items.length === published, `fast reader got seq ${published}`);
    }
    const fastMs = Date.now() - started;

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

    // Once it reads again it catches up to the newest event (a payload stream never ends:
    // the consumers leave).
    slowCall.resume();
    await waitFor(() => seqsOf(slow.items).at(-1) === published, 'slow reader got the newest');
    const slowSeqs = seqsOf(slow.items);
    expect([...slowSeqs].sort((a, b) => a - b)).toEqual(slowSeqs);
    expect(new Set(slowSeqs).size).toBe(slowSeqs.length);
    slowCall.cancel();
    fastCall.cancel();
    expect((await slow.status).code).toBe(GrpcCode.CANCELLED);
    expect((await fast.status).code).toBe(GrpcCode.CANCELLED);
    await waitFor(() => app.bus.subscriberCount() === 0, 'both subscriptions released');
  });
});
