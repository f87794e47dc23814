import { get, type IncomingMessage } from 'node:http';
import { request } from 'undici';
import { OrderStatus } from '@app/order-domain';
import { OverflowPolicy } from '@app/event-bus';
import { bearer } from '../support/auth';
import { SseParser, type SseMessage } from '../support/sse-parser';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

/** No room for a skipped marker: an overflow folds the queue into one reset. */
const QUEUE_CAPACITY = 1;
/** Large events fill the socket buffers of a client that does not read. */
const PADDING_BYTES = 60_000;
const MAX_EVENTS = 400;
const EVENTS_AFTER_OVERFLOW = 5;

/**
 * A slow reader whose queue is too small for a skipped marker gets a reset instead, and
 * that reset is the order as the service knows it, equal to `GET /v1/orders/:id`: the
 * status of the newest status change, the newest tracking and the owner, not just what
 * the newest event says. Real server on port 0, a raw SSE client that stops reading.
 */
describe('a slow reader with a one-item queue', () => {
  let app: TestApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it.each([OverflowPolicy.Conflate, OverflowPolicy.DropOldest])(
    'SSE (%s): the folded reset equals the REST read, tracking and owner included',
    async (policy) => {
      const a = (app = await startTestApp({
        BUS_QUEUE_CAPACITY: String(QUEUE_CAPACITY),
        BUS_OVERFLOW_POLICY: policy,
      }));
      const orderId = `tiny-${policy}`;
      await a.createOwnedOrder(orderId, 'alice', OrderStatus.Paid, OrderStatus.Shipped);
      const res = await new Promise<IncomingMessage>((resolve, reject) => {
        get(
          `${a.httpUrl}/v1/orders/${orderId}/stream?after=3`,
          { headers: { accept: 'text/event-stream', ...bearer() } },
          resolve,
        ).on('error', reject);
      });
      expect(res.statusCode).toBe(200);
      res.pause();
      await waitFor(() => a.bus.subscriberCount(orderId) === 1, 'subscribed');

      let overflowAt: number | undefined;
      for (let i = 0; i < MAX_EVENTS; i++) {
        await a.track(orderId, PADDING_BYTES);
        await new Promise((r) => setImmediate(r));
        if (overflowAt === undefined && a.bus.stats.overflows[policy] > 0) overflowAt = i;
        if (overflowAt !== undefined && i >= overflowAt + EVENTS_AFTER_OVERFLOW) break;
      }
      expect(overflowAt).toBeDefined();
      // The newest event is a status change, which alone carries no tracking and no owner.
      const last = (await a.publish(orderId, OrderStatus.OutForDelivery)).seq;
      const read = await request(`${a.httpUrl}/v1/orders/${orderId}`, { headers: bearer() });
      expect(read.statusCode).toBe(200);
      const stored = (await read.body.json()) as Record<string, unknown>;
      expect(stored).toMatchObject({
        lastSeq: last,
        status: OrderStatus.OutForDelivery,
        ownerId: 'alice',
        tracking: expect.any(Object),
      });

      const parser = new SseParser();
      const messages: SseMessage[] = [];
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => messages.push(...parser.push(chunk)));
      res.resume();
      const resetAt = (m: SseMessage) => m.event === 'reset' && m.id === String(last);
      await waitFor(() => messages.some(resetAt), 'the reset at the newest seq', 15_000);
      res.destroy();
      const reset = JSON.parse(messages.find(resetAt)?.data ?? '{}') as Record<string, unknown>;
      expect(reset).toEqual({ reason: 'overflow', snapshot: stored });
    },
  );
});
