import { status as GrpcCode, type ServiceError } from '@grpc/grpc-js';
import { request } from 'undici';
import { OrderStatus, PROTO_STATUS, type TrackingUpdated } from '@app/order-domain';
import { orderStatusClient, unary, type OrderStatusClient } from '../grpc/grpc-test-client';
import { bearer } from '../support/auth';
import { startTestApp, type TestApp } from '../support/test-app';

const HERE = { lat: 52.5, lon: 13.4 };
const ETA = 1_900_000_000_000;

/**
 * The event model's publish API over REST and gRPC: a repeated status is a conflict (409 /
 * FAILED_PRECONDITION) unless it is an idempotent retry, a cancellation may say why, and
 * tracking updates go to their own route while the order is on the road.
 */
describe('publishing the event model', () => {
  let app: TestApp;
  let grpc: OrderStatusClient;

  beforeAll(async () => {
    app = await startTestApp();
    grpc = orderStatusClient(app.grpcAddress);
  });
  afterAll(async () => {
    grpc.close();
    await app.close();
  });

  const post = async (
    path: string,
    body: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: Record<string, unknown>; replayed?: string }> => {
    const res = await request(`${app.httpUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(), ...headers },
      body: JSON.stringify(body),
    });
    const replayed = res.headers['idempotent-replayed'];
    return {
      status: res.statusCode,
      body: (await res.body.json()) as Record<string, unknown>,
      ...(typeof replayed === 'string' ? { replayed } : {}),
    };
  };
  const grpcError = (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      (err: ServiceError) => ({ code: err.code, details: err.details }),
    );

  describe('REST', () => {
    it('a status change carries previousStatus; the same status again is 409 with the typed body', async () => {
      await app.createOrder('ev-r1');
      const paid = await post('/v1/orders/ev-r1/status', { status: 'paid' });
      expect(paid).toMatchObject({
        status: 201,
        body: { seq: 2, status: 'paid', previousStatus: 'created' },
      });
      const again = await post('/v1/orders/ev-r1/status', { status: 'paid' });
      expect(again).toEqual({
        status: 409,
        body: {
          error: {
            code: 'failed_precondition',
            message: 'order ev-r1 is already paid: a status change must change the status',
          },
        },
      });
      // With an Idempotency-Key, the retry of a publish still answers its event.
      const keyed = await post(
        '/v1/orders/ev-r1/status',
        { status: 'packed' },
        { 'idempotency-key': 'k1' },
      );
      const retry = await post(
        '/v1/orders/ev-r1/status',
        { status: 'packed' },
        { 'idempotency-key': 'k1' },
      );
      expect(keyed.status).toBe(201);
      expect(retry).toEqual({ status: 201, body: keyed.body, replayed: 'true' });
      expect(await app.store.getSnapshot('ev-r1')).toMatchObject({ lastSeq: 3 });
    });

    it('a cancellation may carry a reason; a reason on another status, or unprintable, is 400', async () => {
      await app.createOrder('ev-r2');
      expect(await post('/v1/orders/ev-r2/status', { status: 'paid', reason: 'x' })).toMatchObject({
        status: 400,
        body: {
          error: {
            code: 'invalid_argument',
            message: 'reason is only accepted with status cancelled',
          },
        },
      });
      expect(
        (await post('/v1/orders/ev-r2/status', { status: 'cancelled', reason: 'a\u0007b' })).status,
      ).toBe(400);
      expect(
        (await post('/v1/orders/ev-r2/status', { status: 'cancelled', reason: 'r'.repeat(201) }))
          .status,
      ).toBe(400);
      const cancelled = await post('/v1/orders/ev-r2/status', {
        status: 'cancelled',
        reason: 'address not found',
      });
      expect(cancelled).toMatchObject({
        status: 201,
        body: {
          seq: 2,
          status: 'cancelled',
          previousStatus: 'created',
          reason: 'address not found',
        },
      });
    });

    it('POST /tracking: 201 while shipped, 409 before and after, 404 unknown, 400 bad input, idempotent retry', async () => {
      await app.createOrder('ev-t1', OrderStatus.Paid);
      const track = (body: unknown, headers?: Record<string, string>) =>
        post('/v1/orders/ev-t1/tracking', body, headers);
      expect(await track({ location: HERE, etaMs: ETA })).toEqual({
        status: 409,
        body: {
          error: {
            code: 'failed_precondition',
            message:
              'order ev-t1 is paid: tracking updates are accepted while shipped or out_for_delivery',
          },
        },
      });
      await app.publish('ev-t1', OrderStatus.Shipped);
      const first = await track({ location: HERE, etaMs: ETA }, { 'idempotency-key': 'scan-1' });
      expect(first).toEqual({
        status: 201,
        body: {
          orderId: 'ev-t1',
          seq: 4,
          status: 'shipped',
          publishedAtUs: expect.any(Number) as number,
          location: HERE,
          etaMs: ETA,
        },
      });
      const retry = await track({ location: HERE, etaMs: ETA }, { 'idempotency-key': 'scan-1' });
      expect(retry).toEqual({ ...first, replayed: 'true' });
      // The key names one request: another position under it is refused (422).
      expect(
        (await track({ location: { lat: 1, lon: 1 }, etaMs: ETA }, { 'idempotency-key': 'scan-1' }))
          .status,
      ).toBe(422);
      for (const bad of [
        {},
        { location: HERE },
        { location: { lat: 90.5, lon: 0 }, etaMs: ETA },
        { location: { lat: 0, lon: 0 }, etaMs: -5 },
        { location: HERE, etaMs: ETA, extra: true },
      ]) {
        const res = await track(bad);
        expect([bad, res.status, (res.body.error as { code: string }).code]).toEqual([
          bad,
          400,
          'invalid_argument',
        ]);
      }
      expect(
        (await post('/v1/orders/ev-none/tracking', { location: HERE, etaMs: ETA })).status,
      ).toBe(404);
      await app.publish('ev-t1', OrderStatus.Delivered);
      expect((await track({ location: HERE, etaMs: ETA })).status).toBe(409);
      expect(await app.store.getSnapshot('ev-t1')).toMatchObject({
        lastSeq: 5,
        status: 'delivered',
        tracking: { location: HERE, etaMs: ETA },
      });
    });

    // The load test's filler left the order contract (its sizes are the payload domain's):
    // the ValidationPipe's forbidNonWhitelisted refuses it like any unknown property.
    it('a publish that still sends paddingBytes is 400 (an unknown property); nothing is published', async () => {
      await app.createOrder('ev-pad', OrderStatus.Paid, OrderStatus.Packed, OrderStatus.Shipped);
      const refused = [
        await post('/v1/orders/ev-pad/status', { status: 'out_for_delivery', paddingBytes: 8 }),
        await post('/v1/orders/ev-pad/tracking', { location: HERE, etaMs: ETA, paddingBytes: 8 }),
      ];
      for (const r of refused) {
        expect(r).toEqual({
          status: 400,
          body: {
            error: {
              code: 'invalid_argument',
              message: expect.stringContaining('property paddingBytes should not exist'),
            },
          },
        });
      }
      expect((await app.store.getSnapshot('ev-pad'))?.lastSeq).toBe(4);
      // Without it, the same publish goes through, and the event has no filler field.
      const tracked = await post('/v1/orders/ev-pad/tracking', { location: HERE, etaMs: ETA });
      expect(tracked.status).toBe(201);
      expect(Object.keys(tracked.body).sort()).toEqual(
        ['etaMs', 'location', 'orderId', 'publishedAtUs', 'seq', 'status'].sort(),
      );
    });

    it('POST /tracking needs orders:write, like a status change', async () => {
      await app.createOrder('ev-t2', OrderStatus.Shipped);
      const reader = app.token({ sub: 'reader', scopes: ['orders:read:any'] });
      const res = await post(
        '/v1/orders/ev-t2/tracking',
        { location: HERE, etaMs: ETA },
        { authorization: `Bearer ${reader}` },
      );
      expect(res.status).toBe(403);
      const anonymous = await request(`${app.httpUrl}/v1/orders/ev-t2/tracking`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ location: HERE, etaMs: ETA }),
      });
      expect(anonymous.statusCode).toBe(401);
      await anonymous.body.dump();
    });
  });

  describe('gRPC', () => {
    it('UpdateStatus: the same status again is FAILED_PRECONDITION; a reason travels with a cancellation', async () => {
      await app.createOrder('ev-g1', OrderStatus.Paid);
      const again = await grpcError(
        unary(grpc.updateStatus.bind(grpc), { orderId: 'ev-g1', status: PROTO_STATUS.paid }),
      );
      expect(again).toEqual({
        code: GrpcCode.FAILED_PRECONDITION,
        details: 'order ev-g1 is already paid: a status change must change the status',
      });
      const wrongReason = await grpcError(
        unary(grpc.updateStatus.bind(grpc), {
          orderId: 'ev-g1',
          status: PROTO_STATUS.packed,
          reason: 'why',
        }),
      );
      expect(wrongReason?.code).toBe(GrpcCode.INVALID_ARGUMENT);
      const cancelled = await unary(grpc.updateStatus.bind(grpc), {
        orderId: 'ev-g1',
        status: PROTO_STATUS.cancelled,
        reason: 'fraud suspected',
      });
      expect(cancelled.event).toMatchObject({
        seq: 3,
        status: PROTO_STATUS.cancelled,
        previousStatus: PROTO_STATUS.paid,
        reason: 'fraud suspected',
      });
    });

    it('UpdateTracking: published while shipped, replayed by request_id, refused otherwise', async () => {
      await app.createOrder('ev-g2');
      const call = (req: Parameters<OrderStatusClient['updateTracking']>[0]) =>
        unary(grpc.updateTracking.bind(grpc), req);
      expect(await grpcError(call({ orderId: 'ev-g2', location: HERE, etaMs: ETA }))).toMatchObject(
        { code: GrpcCode.FAILED_PRECONDITION },
      );
      await app.publish('ev-g2', OrderStatus.Shipped);
      const first = await call({ orderId: 'ev-g2', location: HERE, etaMs: ETA, requestId: 'g-1' });
      expect(first).toMatchObject({
        replayed: false,
        tracking: {
          orderId: 'ev-g2',
          seq: 3,
          status: PROTO_STATUS.shipped,
          location: HERE,
          etaMs: ETA,
        },
      });
      const retry = await call({ orderId: 'ev-g2', location: HERE, etaMs: ETA, requestId: 'g-1' });
      expect(retry).toEqual({ ...first, replayed: true });
      // A location is required (a message field has no default), an ETA must be set.
      expect(await grpcError(call({ orderId: 'ev-g2', etaMs: ETA }))).toMatchObject({
        code: GrpcCode.INVALID_ARGUMENT,
      });
      expect(await grpcError(call({ orderId: 'ev-g2', location: HERE }))).toMatchObject({
        code: GrpcCode.INVALID_ARGUMENT,
      });
      expect(
        await grpcError(call({ orderId: 'ev-unknown', location: HERE, etaMs: ETA })),
      ).toMatchObject({
        code: GrpcCode.NOT_FOUND,
      });
      const events = (await app.store.readHistory('ev-g2', 0)) ?? [];
      expect(events.map((e) => e.seq)).toEqual([1, 2, 3]);
      expect((events[2] as TrackingUpdated).location).toEqual(HERE);
    });
  });
});
