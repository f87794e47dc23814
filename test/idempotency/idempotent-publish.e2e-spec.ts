import { request } from 'undici';
import { OrderStatus } from '@app/order-domain';
import { bearer } from '../support/auth';
import { RedisServer } from '../support/redis-server';
import { startTestApp, type TestApp } from '../support/test-app';
import { grpcPublisher, restPublisher, type Publisher } from './publishers';
import { eventsOf } from './support';

const { Created, Paid, Packed } = OrderStatus;
const KEY = '0b7f9a3e-5d2c-4a61-9f0e-2c8d1b6e4a70';

/**
 * Idempotent publish as a client sees it, on both publish APIs and both stores: a repeat
 * answers the first event (same seq and publishedAtUs, marked as a replay) and makes no
 * second event; keys belong to one caller and one order; a key reused for another status
 * is refused; a malformed key is a typed error that does not repeat what was sent.
 */
describe.each([
  ['embedded store', false],
  ['Redis store', true],
])('idempotent publish, %s', (_label, withRedis) => {
  let redis: RedisServer | undefined;
  let app: TestApp;
  const publishers: Publisher[] = [];

  beforeAll(async () => {
    redis = withRedis ? await RedisServer.launch() : undefined;
    app = await startTestApp(redis ? { REDIS_URL: redis.url } : {});
    publishers.push(restPublisher(app.httpUrl), grpcPublisher(app.grpcAddress));
  });
  afterAll(async () => {
    for (const p of publishers.splice(0)) p.close();
    await app.close();
    await redis?.shutdown();
  });

  describe.each(['rest', 'grpc'] as const)('over %s', (api) => {
    const publisher = () => publishers.find((p) => p.name === api) as Publisher;
    const order = (name: string) => `idem-${api}-${name}`;

    it('a repeated key answers the first event and publishes nothing', async () => {
      const orderId = order('repeat');
      await app.createOrder(orderId);
      const first = await publisher().publish({ orderId, status: Paid, key: KEY });
      expect(first).toMatchObject({ code: 'ok', replayed: false, event: { seq: 2 } });
      if (api === 'rest') expect(first.wireStatus).toBe(201);

      const again = await publisher().publish({ orderId, status: Paid, key: KEY });
      expect(again.code).toBe('ok');
      expect(again.replayed).toBe(true);
      expect(again.event).toEqual(first.event); // same seq, same publishedAtUs
      if (api === 'rest') expect(again.wireStatus).toBe(201);

      expect((await eventsOf(app.httpUrl, orderId)).map((e) => e.seq)).toEqual([1, 2]);
      // Without a key the same request is a repeated status: refused, never a second event.
      const plain = await publisher().publish({ orderId, status: Paid });
      expect(plain.code).toBe('failed_precondition');
      expect(plain.wireStatus).toBe(api === 'rest' ? 409 : 9);
      expect((await eventsOf(app.httpUrl, orderId)).map((e) => e.seq)).toEqual([1, 2]);
    });

    it('the same key from another caller, or for another order, is a request of its own', async () => {
      const orderId = order('scope');
      const otherOrder = order('scope-other');
      await app.createOrder(orderId);
      await app.createOrder(otherOrder);
      const mine = await publisher().publish({ orderId, status: Paid, key: KEY });
      expect(mine.event?.seq).toBe(2);

      const foreignToken = app.token({ sub: 'another-publisher' });
      // Another caller's request of its own: the next status (a repeat would be refused).
      const theirs = await publisher().publish({
        orderId,
        status: Packed,
        key: KEY,
        token: foreignToken,
      });
      expect(theirs).toMatchObject({ code: 'ok', replayed: false, event: { seq: 3 } });
      expect(theirs.event?.publishedAtUs).not.toBe(mine.event?.publishedAtUs);

      const elsewhere = await publisher().publish({ orderId: otherOrder, status: Paid, key: KEY });
      expect(elsewhere).toMatchObject({
        code: 'ok',
        replayed: false,
        event: { orderId: otherOrder, seq: 2 },
      });

      // Each caller's own repeat still gets its own first event back.
      const mineAgain = await publisher().publish({ orderId, status: Paid, key: KEY });
      expect(mineAgain).toMatchObject({ replayed: true, event: mine.event });
      const theirsAgain = await publisher().publish({
        orderId,
        status: Packed,
        key: KEY,
        token: foreignToken,
      });
      expect(theirsAgain).toMatchObject({ replayed: true, event: theirs.event });
      expect((await eventsOf(app.httpUrl, orderId)).map((e) => e.seq)).toEqual([1, 2, 3]);
    });

    // draft-ietf-httpapi-idempotency-key-header section 2.7: a key reused with another
    // payload is 422 on HTTP; gRPC has no such code and answers FAILED_PRECONDITION.
    it.each([['another status', { status: Packed }]] as const)(
      'a key repeated with %s is refused (422 / FAILED_PRECONDITION)',
      async (what, change) => {
        const orderId = order(`conflict-${what.replace(/\W+/g, '-')}`);
        await app.createOrder(orderId);
        const first = await publisher().publish({ orderId, status: Paid, key: KEY });
        expect(first.code).toBe('ok');
        const other = await publisher().publish({ orderId, key: KEY, ...change });
        expect(other.code).toBe('failed_precondition');
        expect(other.wireStatus).toBe(api === 'rest' ? 422 : 9);
        expect(other.message).toMatch(/idempotency key/);
        expect((await eventsOf(app.httpUrl, orderId)).map((e) => e.status)).toEqual([
          Created,
          Paid,
        ]);
        // The same request again is still a replay.
        const again = await publisher().publish({ orderId, status: Paid, key: KEY });
        expect(again).toMatchObject({ replayed: true, event: first.event });
      },
    );

    it('a key that created an order, repeated for another owner, is refused', async () => {
      const orderId = order('conflict-owner');
      const first = await publisher().publish({
        orderId,
        status: Created,
        key: KEY,
        ownerId: 'customer-a',
      });
      expect(first.code).toBe('ok');
      const other = await publisher().publish({
        orderId,
        status: Created,
        key: KEY,
        ownerId: 'customer-b',
      });
      expect(other.wireStatus).toBe(api === 'rest' ? 422 : 9);
      const again = await publisher().publish({
        orderId,
        status: Created,
        key: KEY,
        ownerId: 'customer-a',
      });
      expect(again).toMatchObject({ replayed: true, event: first.event });
    });

    const badKeys: [string, string][] = [
      ['too long', 'k'.repeat(129)],
      ['huge', 'K'.repeat(8_000)],
      ['with a space', 'two words'],
      ['with a comma (two headers joined)', 'a,b'],
      // Not a legal HTTP header value (undici refuses to send it): gRPC only.
      ...(api === 'grpc' ? [['not ASCII', 'clé-1'] as [string, string]] : []),
    ];
    it.each(badKeys)('a key %s is a typed error that does not echo it', async (what, key) => {
      const orderId = order(`invalid-${what.replace(/\W+/g, '-')}`);
      await app.createOrder(orderId);
      const answer = await publisher().publish({ orderId, status: Paid, key });
      expect(answer.code).toBe('invalid_argument');
      expect(answer.wireStatus).toBe(api === 'rest' ? 400 : 3);
      expect(answer.message).toMatch(api === 'rest' ? /Idempotency-Key/ : /request_id/);
      expect(answer.message).not.toContain(key.slice(0, 16));
      expect((await eventsOf(app.httpUrl, orderId)).length).toBe(1);
    });
  });

  it('REST: an empty Idempotency-Key is a 400, a quoted one (structured field) is the key', async () => {
    await app.createOrder('idem-quoted');
    const send = (key: string) =>
      request(`${app.httpUrl}/v1/orders/idem-quoted/status`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key, ...bearer() },
        body: JSON.stringify({ status: Paid }),
      });
    const empty = await send('');
    expect(empty.statusCode).toBe(400);
    await empty.body.dump();
    const quoted = await send(`"${KEY}"`);
    expect(quoted.statusCode).toBe(201);
    const first = (await quoted.body.json()) as { seq: number };
    const bare = await send(KEY);
    expect(bare.headers['idempotent-replayed']).toBe('true');
    expect(((await bare.body.json()) as { seq: number }).seq).toBe(first.seq);
  });

  it('REST and gRPC share one key space per caller: a gRPC retry replays a REST publish', async () => {
    await app.createOrder('idem-cross');
    const [rest, grpc] = publishers;
    const viaRest = await rest.publish({ orderId: 'idem-cross', status: Paid, key: KEY });
    const viaGrpc = await grpc.publish({ orderId: 'idem-cross', status: Paid, key: KEY });
    expect(viaGrpc).toMatchObject({ code: 'ok', replayed: true, event: viaRest.event });
  });
});
