import { ResetReason, type DomainSnapshot } from '@app/contracts';
import { watchOrder, type OrderWatch, type TransportName, type WatchItem } from '@app/client/node';
import { ALL_TRANSPORTS, baseUrlFor, closeWatches } from '../client/client-harness';
import { ORDER_GUARANTEES } from '../domain/guarantee-domains';
import { RedisServer } from '../support/redis-server';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

/** Events kept per order, in B's ring and in Redis' history: a resume before them is a reset. */
const RETAINED = 4;
/** Events published on A per order: more than retention, so a resume after 1 is a reset. */
const EVENTS = RETAINED + 4;
const WAIT_MS = 10_000;

/**
 * A reset is the same snapshot whichever path built it: on an instance that did not take
 * the publishes, the bus's state is folded from the events that came over Redis from the
 * other one, and the reset it builds from them must still equal, field for field (the
 * owner included), what `GET /v1/orders/:id` answers from the store, on every transport.
 */
describe('a reset served by the instance that did not take the publish', () => {
  let redis: RedisServer;
  let a: TestApp;
  let b: TestApp;
  const watches: OrderWatch[] = [];

  beforeAll(async () => {
    redis = await RedisServer.launch();
    const env = {
      REDIS_URL: redis.url,
      BUS_RING_SIZE: String(RETAINED),
      REDIS_HISTORY_SIZE: String(RETAINED),
    };
    a = await startTestApp(env);
    b = await startTestApp(env);
  });
  afterEach(() => closeWatches(watches));
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await redis?.shutdown();
  });

  /** Follows `orderId` on B from `after`; its items as they arrive. */
  function followOnB(transport: TransportName, orderId: string, after: number) {
    const items: WatchItem[] = [];
    const watch = watchOrder(orderId, {
      transport,
      baseUrl: baseUrlFor(b, transport),
      token: b.token({ sub: `${orderId}-reader` }),
      longPollWaitS: 5,
      after,
    });
    watches.push(watch);
    void (async () => {
      for await (const item of watch) items.push(item);
    })();
    return { watch, items };
  }

  describe.each(ALL_TRANSPORTS)('over %s', (transport) => {
    it.each([
      { point: 'older than retention', after: 1, reason: ResetReason.BeyondRetention },
      { point: 'past the end', after: EVENTS + 5, reason: ResetReason.AheadOfLastSeq },
    ])(
      'a resume point $point gets the REST read as its snapshot, owner included',
      async ({ after, reason }) => {
        const orderId = `own-${transport}-${reason}`;
        await ORDER_GUARANTEES.next(a, orderId);
        // B follows the order from its start, so its bus applies A's events from the feed.
        const live = followOnB(transport, orderId, 0);
        await waitFor(() => live.watch.cursor === 1, 'the created event on B', WAIT_MS);
        for (let i = 1; i < EVENTS; i++) await ORDER_GUARANTEES.next(a, orderId);
        await waitFor(() => live.watch.cursor === EVENTS, "A's events on B", WAIT_MS);

        const read: DomainSnapshot = await ORDER_GUARANTEES.snapshot(b, orderId);
        expect(read).toMatchObject({ lastSeq: EVENTS, ownerId: expect.any(String) });
        const resumed = followOnB(transport, orderId, after);
        await waitFor(() => resumed.items.length > 0, 'the reset', WAIT_MS);
        expect(resumed.items[0]).toEqual({ kind: 'reset', reset: { reason, snapshot: read } });
      },
    );
  });
});
