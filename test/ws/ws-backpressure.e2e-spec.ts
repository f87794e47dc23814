import { performance } from 'node:perf_hooks';
import type { DomainEvent } from '@app/contracts';
import { OverflowPolicy } from '@app/event-bus';
import { PAYLOAD_DOMAIN, publishPayload } from '@app/payload-domain';
import { OrdersGateway } from '../../apps/order-status/src/transports/ws/orders.gateway';
import { ENGINE_WRITE_BUFFER_HIGH_WATER } from '../../apps/order-status/src/transports/ws/ws-limits';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { ClientPool, type OrdersClient } from './orders-client';
import { RawOrdersClient } from './raw-orders-client';

const QUEUE_CAPACITY = 4;
/** Large events fill the kernel's socket buffers (a few MB on loopback) quickly. */
const PAYLOAD_BYTES = 60_000;
/** The socket.io event name of a payload event. */
const PAYLOAD_EVENT = PAYLOAD_DOMAIN.kinds[0].wireName;
/** Upper bound on events published; the loop stops earlier once overflow is proven. */
const MAX_EVENTS = 500;
/** Events published after the first overflow, while the slow reader is stuck. */
const EVENTS_AFTER_OVERFLOW = 30;
/** Generous per-event bound for the fast client: far below "waits for the slow one". */
const FAST_DEADLINE_MS = 2_000;

/** The payload events `socket` receives, in arrival order. */
function payloadsOf(socket: OrdersClient): DomainEvent[] {
  const got: DomainEvent[] = [];
  socket.onAny((name: string, e: DomainEvent) => {
    if (name === PAYLOAD_EVENT) got.push(e);
  });
  return got;
}

/** Resolves when `got` holds the event with `seq`; rejects after `timeoutMs`. */
async function eventWithSeq(got: DomainEvent[], seq: number, timeoutMs: number): Promise<void> {
  await waitFor(() => (got.at(-1)?.seq ?? 0) >= seq, `fast client got seq ${seq}`, timeoutMs);
}

describe('socket.io /orders: a consumer that stops reading', () => {
  let app: TestApp;
  let slow: RawOrdersClient | undefined;
  const pool = new ClientPool();

  afterEach(async () => {
    await slow?.close();
    await pool.closeAll();
    await app.close();
  });

  it('does not delay a fast one on the same order, and its backlog stays bounded', async () => {
    app = await startTestApp({
      BUS_QUEUE_CAPACITY: String(QUEUE_CAPACITY),
      BUS_OVERFLOW_POLICY: OverflowPolicy.Conflate,
      // No engine ping may close the stuck socket during the test.
      WS_PING_INTERVAL_MS: '120000',
      WS_PING_TIMEOUT_MS: '120000',
      // Events of a chosen size are the load test's own domain's, not the order's.
      STREAM_DOMAIN: 'payload',
    });
    const gateway = app.app.get(OrdersGateway);
    await publishPayload(app.store, { orderId: 'bp-1', bytes: 0 });

    slow = await RawOrdersClient.connect(app.httpUrl);
    expect(await slow.subscribe('bp-1', 1)).toMatchObject({ ok: true, lastSeq: 1 });
    slow.pause();
    const fast = await pool.connect(app.httpUrl);
    const fastEvents = payloadsOf(fast.socket);
    expect(await fast.subscribe('bp-1', 1)).toMatchObject({ ok: true, lastSeq: 1 });

    const stats = app.bus.stats;
    let maxPending = 0;
    let maxEngineBuffered = 0;
    let maxLatencyMs = 0;
    let overflowAt: number | undefined;
    let lastSeq = 1;
    for (let i = 0; i < MAX_EVENTS; i++) {
      const t0 = performance.now();
      lastSeq = (await publishPayload(app.store, { orderId: 'bp-1', bytes: PAYLOAD_BYTES })).seq;
      await eventWithSeq(fastEvents, lastSeq, FAST_DEADLINE_MS);
      maxLatencyMs = Math.max(maxLatencyMs, performance.now() - t0);

      const backlog = gateway.inspect(slow.sid);
      if (backlog === undefined) throw new Error('the slow socket was disconnected');
      maxPending = Math.max(maxPending, ...backlog.subscriptions.map((s) => s.pending));
      maxEngineBuffered = Math.max(maxEngineBuffered, backlog.engineBuffered);
      if (overflowAt === undefined && stats.overflows.conflate > 0) overflowAt = i;
      if (overflowAt !== undefined && i >= overflowAt + EVENTS_AFTER_OVERFLOW) break;
    }

    // The slow subscription overflowed (conflating), and only that one fell behind.
    expect(overflowAt).toBeDefined();
    expect(stats.overflowDropped.conflate).toBeGreaterThan(0);
    // Every event reached the fast client, in order, each within the bound.
    expect(fastEvents.map((e) => e.seq)).toEqual(
      Array.from({ length: lastSeq - 1 }, (_, k) => k + 2),
    );
    expect(maxLatencyMs).toBeLessThan(FAST_DEADLINE_MS);
    // The slow consumer's backlog is bounded in the bus and in the engine.
    expect(maxPending).toBeLessThanOrEqual(QUEUE_CAPACITY);
    expect(maxEngineBuffered).toBeLessThanOrEqual(ENGINE_WRITE_BUFFER_HIGH_WATER);

    // Once it reads again it catches up with the newest event; conflation skipped some.
    slow.resume();
    const reader = slow;
    await waitFor(() => reader.events.at(-1)?.seq === lastSeq, 'slow reader gets the newest seq');
    const seqs = reader.events.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs.length).toBeLessThan(lastSeq - 1);
  });
});
