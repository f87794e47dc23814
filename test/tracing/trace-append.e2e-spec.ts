import type { DomainEvent, DomainSnapshot, StreamDomain, TraceContext } from '@app/contracts';
import {
  ORDER_DOMAIN,
  OrderStatus,
  publishStatus,
  publishStatusSync,
  publishTracking,
  publishTrackingSync,
} from '@app/order-domain';
import { PAYLOAD_DOMAIN, publishPayload } from '@app/payload-domain';
import { RedisStreamStore } from '@app/redis-store';
import { InMemoryStreamStore, isReplay, type StreamStore } from '@app/store';
import { RedisServer } from '../support/redis-server';
import { waitFor } from '../support/wait-for';

function traceOf(n: number): TraceContext {
  const hex = n.toString(16).padStart(2, '0');
  return {
    traceparent: `00-${hex.repeat(16)}-${hex.repeat(8)}-01`,
    tracestate: `vendor=${hex}`,
  };
}

/**
 * The publish's trace context reaches the generic append (`AppendOptions.traceContext`)
 * from every publish function, and each store hands it back for the event it announces
 * (`traceContextOf`): in memory by the event, on Redis through the pub/sub message the
 * script prefixes. It is not part of the idempotency record: a retry with the same key
 * under another trace replays the first event and announces nothing.
 */
describe.each(['in-memory', 'redis'] as const)('the trace context through append: %s', (kind) => {
  let redis: RedisServer | undefined;
  const stores: StreamStore[] = [];

  beforeAll(async () => {
    if (kind === 'redis') redis = await RedisServer.launch();
  });
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close?.();
  });
  afterAll(async () => {
    await redis?.shutdown();
  });

  async function open<E extends DomainEvent, S extends DomainSnapshot>(
    domain: StreamDomain<E, S>,
  ): Promise<StreamStore<E, S>> {
    const store =
      redis === undefined
        ? new InMemoryStreamStore({ domain })
        : new RedisStreamStore({ url: redis.url, keyPrefix: `tr${stores.length}`, domain });
    stores.push(store);
    if (store instanceof RedisStreamStore) expect(await store.whenUp(5_000)).toBe(true);
    return store;
  }

  /** The events `store` announces for `orderId`, with the trace context of each. */
  async function announced(store: StreamStore, orderId: string) {
    const seen: { seq: number; trace: TraceContext | undefined }[] = [];
    // A routing store (Redis) delivers only the streams it was asked for.
    await store.watch?.(orderId);
    store.events$.subscribe((e) => {
      if (e.orderId === orderId) seen.push({ seq: e.seq, trace: store.traceContextOf?.(e) });
    });
    return seen;
  }

  it('carries a status change and a tracking update, asynchronously', async () => {
    const store = await open(ORDER_DOMAIN);
    const seen = await announced(store, 'o-async');
    const location = { lat: 52.5, lon: 13.4 };
    const { Created, Paid, Packed, Shipped } = OrderStatus;
    await publishStatus(store, { orderId: 'o-async', status: Created, traceContext: traceOf(1) });
    await publishStatus(store, { orderId: 'o-async', status: Paid });
    await publishStatus(store, { orderId: 'o-async', status: Packed, traceContext: traceOf(3) });
    await publishStatus(store, { orderId: 'o-async', status: Shipped, traceContext: traceOf(4) });
    await publishTracking(store, {
      orderId: 'o-async',
      location,
      etaMs: 1_000,
      traceContext: traceOf(5),
    });
    await waitFor(() => seen.length === 5, 'five events announced');
    expect(seen).toEqual([
      { seq: 1, trace: traceOf(1) },
      { seq: 2, trace: undefined },
      { seq: 3, trace: traceOf(3) },
      { seq: 4, trace: traceOf(4) },
      { seq: 5, trace: traceOf(5) },
    ]);
  });

  it('replays a repeated key under another trace, announcing nothing', async () => {
    const store = await open(ORDER_DOMAIN);
    const seen = await announced(store, 'o-replay');
    const cmd = { orderId: 'o-replay', status: OrderStatus.Created, idempotencyKey: 'k-1' };
    const first = await publishStatus(store, { ...cmd, traceContext: traceOf(7) });
    const again = await publishStatus(store, { ...cmd, traceContext: traceOf(8) });
    expect(isReplay(again)).toBe(true);
    expect(again.seq).toBe(first.seq);
    await publishStatus(store, { orderId: 'o-replay', status: OrderStatus.Paid });
    await waitFor(() => seen.length === 2, 'the create and the next status announced');
    expect(seen).toEqual([
      { seq: 1, trace: traceOf(7) },
      { seq: 2, trace: undefined },
    ]);
  });

  it("carries another domain's publish (the payload domain)", async () => {
    const store = await open(PAYLOAD_DOMAIN);
    const seen = await announced(store, 'p-1');
    await publishPayload(store, { orderId: 'p-1', bytes: 8, traceContext: traceOf(9) });
    await publishPayload(store, { orderId: 'p-1', bytes: 8 });
    await waitFor(() => seen.length === 2, 'two payloads announced');
    expect(seen).toEqual([
      { seq: 1, trace: traceOf(9) },
      { seq: 2, trace: undefined },
    ]);
  });

  if (kind === 'in-memory') {
    it('carries the synchronous publishes (the simulator)', async () => {
      const store = await open(ORDER_DOMAIN);
      const seen = await announced(store, 'o-sync');
      const { Created, Paid, Packed, Shipped } = OrderStatus;
      publishStatusSync(store, { orderId: 'o-sync', status: Created, traceContext: traceOf(10) });
      for (const status of [Paid, Packed, Shipped]) {
        publishStatusSync(store, { orderId: 'o-sync', status });
      }
      publishTrackingSync(store, {
        orderId: 'o-sync',
        location: { lat: 1, lon: 2 },
        etaMs: 5,
        traceContext: traceOf(11),
      });
      expect(seen.map((s) => s.trace)).toEqual([
        traceOf(10),
        undefined,
        undefined,
        undefined,
        traceOf(11),
      ]);
    });
  }
});
