import { request } from 'undici';
import { ErrorCode } from '@app/contracts';
import { OrderStatus } from '@app/order-domain';
import { Attempts, noSubscriptions, TRANSPORTS, type AttemptTransport } from '../auth/attempts';
import { startTestApp, type TestApp } from '../support/test-app';

const READS: AttemptTransport[] = TRANSPORTS.filter((t) => !t.includes('publish'));

/**
 * A customer cannot tell another customer's order from one that does not exist: both
 * answer not_found, with the same status and message shape, on every transport, so
 * order ids (sequential in the demo) cannot be probed.
 */
describe('order probing', () => {
  let app: TestApp;
  let attempts: Attempts;
  let alice: string;

  beforeAll(async () => {
    app = await startTestApp();
    attempts = new Attempts(app);
    alice = app.token({ sub: 'alice', scopes: ['orders:read'] });
    await app.createOwnedOrder('probe-1', 'bob', OrderStatus.Paid);
  });
  afterAll(async () => {
    await attempts.close();
    await app.close();
  });

  it.each(READS)('answers a foreign and a missing order alike on %s', async (transport) => {
    const foreign = await attempts.run(transport, 'probe-1', alice);
    const missing = await attempts.run(transport, 'probe-2', alice);
    expect(foreign).toEqual(missing);
    expect(foreign).toMatchObject({ code: ErrorCode.NotFound, events: 0 });
    await noSubscriptions(app);
  });

  it('answers HTTP with the same body shape for both', async () => {
    const bodies: string[] = [];
    for (const id of ['probe-1', 'probe-2']) {
      const res = await request(`${app.httpUrl}/v1/orders/${id}`, {
        headers: { authorization: `Bearer ${alice}` },
      });
      expect(res.statusCode).toBe(404);
      bodies.push((await res.body.text()).replace(id, '<id>'));
    }
    expect(bodies[0]).toBe(bodies[1]);
  });

  it('answers a stream-ticket request alike', async () => {
    const statuses: number[] = [];
    for (const id of ['probe-1', 'probe-2']) {
      const res = await request(`${app.httpUrl}/v1/stream-tickets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
        body: JSON.stringify({ orderId: id }),
      });
      statuses.push(res.statusCode);
      await res.body.dump();
    }
    expect(statuses).toEqual([404, 404]);
  });
});
