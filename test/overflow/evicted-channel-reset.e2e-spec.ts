import { ResetReason, type DomainSnapshot } from '@app/contracts';
import { watchOrder, type OrderWatch, type WatchItem } from '@app/client/node';
import type { BusSubscription } from '@app/event-bus';
import { OrderStatus } from '@app/order-domain';
import { ALL_TRANSPORTS, baseUrlFor, closeWatches } from '../client/client-harness';
import { ORDER_GUARANTEES } from '../domain/guarantee-domains';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

/** Events kept per order, in the bus's ring and the in-memory store's history. */
const RETAINED = 2;
/** How long the bus keeps an order nobody follows. */
const CHANNEL_IDLE_MS = 500;
const WAIT_MS = 10_000;

/**
 * With the in-memory store the bus lets go of an order nobody follows and makes its
 * channel again at the order's next event. A status change alone has no tracking and no
 * owner, yet a reset the bus builds from that channel must equal `GET /v1/orders/:id`,
 * on every transport.
 */
describe('a reset from a channel made again by a status change after its eviction', () => {
  let app: TestApp;
  const watches: OrderWatch[] = [];
  let keeper: BusSubscription | undefined;

  beforeAll(async () => {
    app = await startTestApp({
      BUS_RING_SIZE: String(RETAINED),
      BUS_CHANNEL_IDLE_MS: String(CHANNEL_IDLE_MS),
    });
  });
  afterEach(async () => {
    keeper?.close();
    await closeWatches(watches);
  });
  afterAll(() => app?.close());

  it.each(ALL_TRANSPORTS)(
    'over %s: the REST read, tracking and owner included',
    async (transport) => {
      const orderId = `evicted-${transport}`;
      await app.createOwnedOrder(
        orderId,
        'alice',
        OrderStatus.Paid,
        OrderStatus.Shipped,
        'tracking',
      );
      await waitFor(
        () => app.bus.subscriberCount() === 0 && app.bus.orderCount === 0,
        'eviction',
        WAIT_MS,
      );
      const last = await app.publish(orderId, OrderStatus.OutForDelivery);
      // An up-to-date subscriber in process keeps the channel made again by that event.
      keeper = await app.bus.open(orderId, last.seq, {
        write: () => true,
        onDrain: () => {},
        end: () => {},
      });

      const read: DomainSnapshot = await ORDER_GUARANTEES.snapshot(app, orderId);
      expect(read).toMatchObject({
        lastSeq: last.seq,
        status: OrderStatus.OutForDelivery,
        ownerId: 'alice',
        tracking: expect.any(Object),
      });
      const items: WatchItem[] = [];
      const watch = watchOrder(orderId, {
        transport,
        baseUrl: baseUrlFor(app, transport),
        token: app.token({ sub: 'alice' }),
        longPollWaitS: 5,
        after: 1,
      });
      watches.push(watch);
      void (async () => {
        for await (const item of watch) items.push(item);
      })();
      await waitFor(() => items.length > 0, 'the reset', WAIT_MS);
      expect(items[0]).toEqual({
        kind: 'reset',
        reset: { reason: ResetReason.BeyondRetention, snapshot: read },
      });
    },
  );
});
