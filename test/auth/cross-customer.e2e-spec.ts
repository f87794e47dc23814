import fc from 'fast-check';
import { request } from 'undici';
import { ErrorCode } from '@app/contracts';
import { OrderStatus } from '@app/order-domain';
import { openSseH1 } from '../support/sse-stream';
import { startTestApp, type TestApp } from '../support/test-app';
import { Attempts, noSubscriptions, TRANSPORTS, type AttemptTransport } from './attempts';

/** The read paths (publish needs orders:write, which customers do not hold). */
const READS: AttemptTransport[] = TRANSPORTS.filter((t) => !t.includes('publish'));

/**
 * Per-order authorization on every subscribe and every resume: a customer never gets
 * another customer's events, whatever the transport, the resume point or the order of
 * attempts (a property over many attempts), and always gets its own.
 */
describe('cross-customer access', () => {
  let app: TestApp;
  let attempts: Attempts;
  let alice: string;

  beforeAll(async () => {
    app = await startTestApp();
    attempts = new Attempts(app);
    alice = app.token({ sub: 'alice', scopes: ['orders:read'] });
    await app.createOwnedOrder('alice-1', 'alice', OrderStatus.Paid);
    for (const id of ['bob-1', 'bob-2', 'carol-1']) {
      await app.createOwnedOrder(id, id.split('-')[0], OrderStatus.Paid, OrderStatus.Packed);
    }
  });
  afterAll(async () => {
    await attempts.close();
    await app.close();
  });

  // not_found, exactly as for an order that does not exist: ids cannot be probed
  // (test/hardening/order-probing.e2e-spec.ts compares the two answers).
  it('refuses every subscribe and resume to a foreign order with not_found and zero events', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...READS),
        fc.constantFrom('bob-1', 'bob-2', 'carol-1'),
        fc.integer({ min: 0, max: 5 }),
        async (transport, orderId, afterSeq) => {
          const outcome = await attempts.run(transport, orderId, alice, afterSeq);
          expect([transport, orderId, afterSeq, outcome.code, outcome.events]).toEqual([
            transport,
            orderId,
            afterSeq,
            ErrorCode.NotFound,
            0,
          ]);
        },
      ),
      { numRuns: 60 },
    );
    await noSubscriptions(app);
  });

  it('refuses a foreign SSE resume by Last-Event-ID and a ticket for a foreign order', async () => {
    const s = await openSseH1(`${app.httpUrl}/v1/orders/bob-1/stream`, {
      authorization: `Bearer ${alice}`,
      'last-event-id': '1',
    });
    await s.ended;
    expect(s.status).toBe(404);
    expect(s.events()).toEqual([]);
    const ticket = await request(`${app.httpUrl}/v1/stream-tickets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
      body: JSON.stringify({ orderId: 'bob-1' }),
    });
    expect(ticket.statusCode).toBe(404);
    expect(await ticket.body.json()).toMatchObject({ error: { code: 'not_found' } });
  });

  it.each(READS)('lets the owner read its own order on %s', async (transport) => {
    const outcome = await attempts.run(transport, 'alice-1', alice, 0);
    expect(outcome.code).toBe('ok');
    if (['sse', 'long-poll', 'grpc-subscribe', 'ws-websocket', 'ws-polling'].includes(transport)) {
      expect(outcome.events).toBe(2);
    }
  });

  it('customers cannot publish; a publish creates an order owned by the caller or the named owner', async () => {
    expect((await attempts.run('publish', 'alice-1', alice)).code).toBe(ErrorCode.PermissionDenied);
    expect((await attempts.run('grpc-publish', 'alice-1', alice)).code).toBe(
      ErrorCode.PermissionDenied,
    );
    const post = (orderId: string, body: object) =>
      request(`${app.httpUrl}/v1/orders/${orderId}/status`, {
        method: 'POST',
        headers: { ...app.authHeaders, 'content-type': 'application/json' },
        body: JSON.stringify({ status: 'created', ...body }),
      });
    expect((await post('new-1', {})).statusCode).toBe(201);
    expect((await post('new-2', { ownerId: 'alice' })).statusCode).toBe(201);
    expect((await app.store.getSnapshot('new-1'))?.ownerId).toBe('support');
    expect((await app.store.getSnapshot('new-2'))?.ownerId).toBe('alice');
    expect((await attempts.run('snapshot', 'new-2', alice)).code).toBe('ok');
    expect((await attempts.run('snapshot', 'new-1', alice)).code).toBe(ErrorCode.NotFound);
  });
});
