import { status as GrpcCode, type StatusObject } from '@grpc/grpc-js';
import { ErrorCode, StreamEndTrailer } from '@app/contracts';
import { Readiness } from '../../apps/order-status/src/ops/readiness.service';
import { collect, orderStatusClient, type OrderStatusClient } from '../grpc/grpc-test-client';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { ClientPool } from '../ws/orders-client';

/**
 * The connection layer's drain gate turns away a connection that reaches the service
 * while it drains, on the transports that bypass the HTTP hook too: a gRPC Subscribe on
 * a connection that has not had its GOAWAY yet, a new socket.io connection (engine.io
 * answers its own requests). Each gets the typed `unavailable` with reconnect advice,
 * and no stream opens. (SSE, long-poll and the raw WebSocket: graceful-shutdown,
 * drain-readiness and websocket-backpressure specs.)
 */
describe('drain gate on gRPC and socket.io', () => {
  let app: TestApp;
  let grpc: OrderStatusClient;
  const pool = new ClientPool();

  beforeAll(async () => {
    app = await startTestApp();
    grpc = orderStatusClient(app.grpcAddress);
    await app.createOrder('dg-1');
  });
  afterAll(async () => {
    await pool.closeAll();
    grpc.close();
    await app.close();
  });

  it('refuses new streams with unavailable and reconnect advice while the instance drains', async () => {
    // A stream opened before the drain, on the channel the next call will use.
    const beforeCall = grpc.subscribe({ orderId: 'dg-1', afterSeq: 0 });
    const before = collect(beforeCall);
    await waitFor(() => before.items.length === 1, 'the stream before the drain');
    app.app.get(Readiness).beginDrain();

    const during = collect(grpc.subscribe({ orderId: 'dg-1', afterSeq: 0 }));
    const st: StatusObject = await during.status;
    expect(st.code).toBe(GrpcCode.UNAVAILABLE);
    expect(Number(st.metadata.get(StreamEndTrailer.RetryAfterMs)[0])).toBeGreaterThanOrEqual(100);
    expect(during.items).toEqual([]);

    const refused = await pool.connect(app.httpUrl).then(
      () => undefined,
      (err: { data?: { code: string; retryAfterMs?: number } }) => err.data,
    );
    expect(refused).toMatchObject({
      code: ErrorCode.Unavailable,
      retryAfterMs: expect.any(Number),
    });
    // Only the stream opened before the drain is on the bus.
    expect(app.bus.subscriberCount()).toBe(1);
    beforeCall.cancel();
    expect((await before.status).code).toBe(GrpcCode.CANCELLED);
  });
});
