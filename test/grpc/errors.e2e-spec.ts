import { status as GrpcCode, type ServiceError } from '@grpc/grpc-js';
import { OrderStatus, PROTO_STATUS } from '@app/order-domain';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import {
  collect,
  orderStatusClient,
  seqsOf,
  unary,
  type OrderStatusClient,
} from './grpc-test-client';

/** Runs a unary call that must fail and returns its status code and details. */
async function failure(call: Promise<unknown>): Promise<Pick<ServiceError, 'code' | 'details'>> {
  try {
    await call;
  } catch (err) {
    const { code, details } = err as ServiceError;
    return { code, details };
  }
  throw new Error('call succeeded, expected an error status');
}

describe('gRPC errors and unary calls', () => {
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

  const getOrder = (orderId: string) => unary(client.getOrder.bind(client), { orderId });
  const updateStatus = (req: { orderId: string; status: number }) =>
    unary(client.updateStatus.bind(client), req);

  it('GetOrder returns the snapshot; UpdateStatus publishes and returns the event', async () => {
    const created = await updateStatus({
      orderId: 'u-1',
      status: PROTO_STATUS[OrderStatus.Created],
    });
    expect(created.event).toMatchObject({ orderId: 'u-1', seq: 1 });
    const paid = await updateStatus({ orderId: 'u-1', status: PROTO_STATUS[OrderStatus.Paid] });
    expect(paid.event).toMatchObject({ seq: 2, status: PROTO_STATUS[OrderStatus.Paid] });
    expect(await getOrder('u-1')).toMatchObject({
      orderId: 'u-1',
      lastSeq: 2,
      status: PROTO_STATUS[OrderStatus.Paid],
    });
  });

  it('maps bad input to the right codes while a healthy stream keeps receiving', async () => {
    await app.createOrder('healthy-1');
    const healthy = collect(client.subscribe({ orderId: 'healthy-1' }));
    await waitFor(() => healthy.items.length === 1, 'healthy stream open');
    let seq = 1;
    const tick = async () => {
      await app.progress('healthy-1');
      seq++;
      await waitFor(() => healthy.items.length === seq, `healthy stream got seq ${seq}`);
    };

    // Subscribe: unknown order and malformed id end the stream with a status.
    const unknown = collect(client.subscribe({ orderId: 'no-such-order' }));
    expect(await unknown.status).toMatchObject({ code: GrpcCode.NOT_FOUND });
    expect(unknown.items).toEqual([]);
    await tick();
    expect((await collect(client.subscribe({ orderId: 'bad id!' })).status).code).toBe(
      GrpcCode.INVALID_ARGUMENT,
    );
    await tick();

    // GetOrder.
    expect((await failure(getOrder('no-such-order'))).code).toBe(GrpcCode.NOT_FOUND);
    expect((await failure(getOrder(''))).code).toBe(GrpcCode.INVALID_ARGUMENT);
    await tick();

    // UpdateStatus: UNSPECIFIED, unknown enum number, a bad order id, not created yet,
    // forbidden transition.
    const bad = [
      { orderId: 'healthy-1', status: 0 },
      { orderId: 'healthy-1', status: 99 },
      { orderId: '-leading-dash', status: PROTO_STATUS[OrderStatus.Created] },
    ];
    for (const req of bad) {
      const err = await failure(updateStatus(req));
      expect({ req, code: err.code }).toEqual({ req, code: GrpcCode.INVALID_ARGUMENT });
    }
    const notCreated = await failure(
      updateStatus({ orderId: 'new-1', status: PROTO_STATUS[OrderStatus.Paid] }),
    );
    expect(notCreated.code).toBe(GrpcCode.NOT_FOUND);
    const backwards = await failure(
      updateStatus({ orderId: 'healthy-1', status: PROTO_STATUS[OrderStatus.Created] }),
    );
    expect(backwards.code).toBe(GrpcCode.FAILED_PRECONDITION);
    expect(backwards.details).toContain('cannot move');
    await tick();

    // An oversized request is refused by grpc-js itself (maxReceiveMessageLength, 64 KiB
    // by default here) before any handler runs.
    const huge = await failure(getOrder('x'.repeat(100_000)));
    expect(huge.code).toBe(GrpcCode.RESOURCE_EXHAUSTED);
    await tick();

    // The healthy stream saw every event, in order, and is still open.
    expect(seqsOf(healthy.items)).toEqual(Array.from({ length: seq }, (_, i) => i + 1));
    expect(app.bus.subscriberCount('healthy-1')).toBe(1);
    await app.publish('healthy-1', OrderStatus.Delivered);
    expect((await healthy.status).code).toBe(GrpcCode.OK);
    expect(seqsOf(healthy.items)).toHaveLength(seq + 1);
  });
});
