import type { ServiceError } from '@grpc/grpc-js';
import { request } from 'undici';
import { OrderStatus, PROTO_STATUS, type OrderSnapshot } from '@app/order-domain';
import { orderStatusClient, unary } from '../grpc/grpc-test-client';
import { bearer } from '../support/auth';
import { startTestApp, type TestApp } from '../support/test-app';
import { grpcPublisher, restPublisher, type PublishRequest, type Publisher } from './publishers';

const { Created, Paid, Packed } = OrderStatus;
const PUBLISH_LIMIT = 3;

/** One step of the script as a client sees it, whichever API carried it. */
interface Outcome {
  readonly code: string;
  readonly replayed: boolean;
  readonly seq?: number;
  readonly status?: string;
}

/**
 * REST and gRPC publish through one path: the same commands give the same answers
 * (idempotent replay, refusals, the rate limit's count) and the same snapshot, owner
 * included. Each API publishes as its own caller, so each has its own rate bucket.
 */
describe('one publish path for REST and gRPC', () => {
  let app: TestApp;
  const publishers: Publisher[] = [];

  beforeAll(async () => {
    app = await startTestApp({
      LIMIT_PUBLISH_PER_WINDOW: String(PUBLISH_LIMIT),
      LIMIT_PUBLISH_WINDOW_MS: '600000',
    });
    publishers.push(restPublisher(app.httpUrl), grpcPublisher(app.grpcAddress));
  });
  afterAll(async () => {
    for (const p of publishers.splice(0)) p.close();
    await app.close();
  });

  /** The script: invalid input costs no rate, a replay answers the first event. */
  async function runScript(publisher: Publisher): Promise<Outcome[]> {
    const token = app.token({ sub: `publisher-${publisher.name}` });
    const orderId = `path-${publisher.name}`;
    const steps: Omit<PublishRequest, 'orderId' | 'token'>[] = [
      { status: Created, key: 'k-1', ownerId: 'carol' },
      { status: Paid, key: 'not a key' },
      { status: 'no-such-status' as OrderStatus, key: 'k-2' },
      { status: Created, key: 'k-1', ownerId: 'carol' },
      { status: Paid, key: 'k-2' },
      { status: Packed, key: 'k-3' },
    ];
    const outcomes: Outcome[] = [];
    for (const step of steps) {
      const a = await publisher.publish({ ...step, orderId, token });
      outcomes.push({
        code: a.code,
        replayed: a.replayed,
        ...(a.event ? { seq: a.event.seq, status: (a.event as { status: string }).status } : {}),
      });
    }
    return outcomes;
  }

  it('the same commands give the same answers, rate limit included', async () => {
    const [rest, grpc] = await Promise.all(publishers.map((p) => runScript(p)));
    expect(rest).toEqual([
      { code: 'ok', replayed: false, seq: 1, status: Created },
      { code: 'invalid_argument', replayed: false },
      { code: 'invalid_argument', replayed: false },
      { code: 'ok', replayed: true, seq: 1, status: Created },
      { code: 'ok', replayed: false, seq: 2, status: Paid },
      { code: 'resource_exhausted', replayed: false },
    ]);
    expect(grpc).toEqual(rest);
  });

  it('the same refusals over both: a key reused for another request, a token without write', async () => {
    const script = async (publisher: Publisher): Promise<Outcome[]> => {
      const orderId = `refused-${publisher.name}`;
      const token = app.token({ sub: `refuser-${publisher.name}` });
      const reader = app.token({ sub: `reader-${publisher.name}`, scopes: ['orders:read'] });
      const steps: Omit<PublishRequest, 'orderId'>[] = [
        { status: Created, key: 'k-1', ownerId: 'erin', token },
        // The key names one request: another status, or another owner for the creation.
        { status: Paid, key: 'k-1', token },
        { status: Created, key: 'k-1', ownerId: 'frank', token },
        { status: Paid, token: reader },
      ];
      const outcomes: Outcome[] = [];
      for (const step of steps) {
        const a = await publisher.publish({ ...step, orderId });
        outcomes.push({
          code: a.code,
          replayed: a.replayed,
          ...(a.event ? { seq: a.event.seq } : {}),
        });
      }
      return outcomes;
    };
    const [rest, grpc] = await Promise.all(publishers.map((p) => script(p)));
    expect(rest).toEqual([
      { code: 'ok', replayed: false, seq: 1 },
      { code: 'failed_precondition', replayed: false },
      { code: 'failed_precondition', replayed: false },
      { code: 'permission_denied', replayed: false },
    ]);
    expect(grpc).toEqual(rest);
  });

  it("another customer's order is not found over both, its owner's is the same snapshot", async () => {
    await app.createOwnedOrder('path-owned', 'erin', Paid);
    const client = (sub: string) =>
      orderStatusClient(app.grpcAddress, {}, app.token({ sub, scopes: ['orders:read'] }));
    const read = async (sub: string) => {
      const token = app.token({ sub, scopes: ['orders:read'] });
      const res = await request(`${app.httpUrl}/v1/orders/path-owned`, { headers: bearer(token) });
      const body = (await res.body.json()) as OrderSnapshot | { error: { code: string } };
      const grpcClient = client(sub);
      try {
        const answer = await unary(
          grpcClient.getOrder.bind(grpcClient) as (
            req: object,
            options: object,
            cb: (err: ServiceError | null, res?: object) => void,
          ) => void,
          { orderId: 'path-owned' },
        ).catch((err: ServiceError) => ({ grpcCode: err.code }));
        return { rest: { status: res.statusCode, body }, grpc: answer };
      } finally {
        grpcClient.close();
      }
    };
    const other = await read('frank');
    expect(other).toEqual({
      rest: { status: 404, body: { error: expect.objectContaining({ code: 'not_found' }) } },
      grpc: { grpcCode: 5 },
    });
    const owner = await read('erin');
    expect(owner.rest).toMatchObject({ status: 200, body: { ownerId: 'erin', status: Paid } });
    const rest = owner.rest.body as OrderSnapshot;
    expect(owner.grpc).toMatchObject({
      orderId: rest.orderId,
      status: PROTO_STATUS[rest.status],
      lastSeq: rest.lastSeq,
      updatedAtUs: rest.updatedAtUs,
      ownerId: 'erin',
    });
  });

  it("the snapshot is the same over both, with the order's owner", async () => {
    await app.createOwnedOrder('path-snapshot', 'dave', Paid);
    const res = await request(`${app.httpUrl}/v1/orders/path-snapshot`, { headers: bearer() });
    const rest = (await res.body.json()) as OrderSnapshot;
    expect(rest).toMatchObject({ orderId: 'path-snapshot', status: Paid, ownerId: 'dave' });

    const client = orderStatusClient(app.grpcAddress);
    try {
      const snapshot = await unary(
        client.getOrder.bind(client) as (
          req: object,
          options: object,
          cb: (err: ServiceError | null, res?: object) => void,
        ) => void,
        { orderId: 'path-snapshot' },
      );
      expect(snapshot).toMatchObject({
        orderId: rest.orderId,
        status: PROTO_STATUS[rest.status],
        lastSeq: rest.lastSeq,
        updatedAtUs: rest.updatedAtUs,
        ownerId: 'dave',
      });
    } finally {
      client.close();
    }
  });
});
