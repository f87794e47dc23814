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
/**
 * Bytes of tracking updates per step: order events carry no filler, so a step is a few
 * hundred small ones, published in process (REST would take minutes to fill the socket
 * buffers of a client that does not read).
 */
const STEP_BYTES = 60_000;
const MAX_STEPS = 400;
/** A socket that has not drained for this long is blocked, not merely slow. */
const BLOCKED_MS = 200;

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

      // Fill until the socket is blocked: an event published after a pause still finds the
      // queue full (a socket that drains meanwhile would deliver the next event as is).
      const overflows = () => a.bus.stats.overflows[policy];
      let blockedAt: number | undefined;
      for (let i = 0; i < MAX_STEPS && blockedAt === undefined; i++) {
        for (let bytes = 0; bytes < STEP_BYTES;) {
          bytes += JSON.stringify(await a.track(orderId)).length;
        }
        if (overflows() === 0) continue;
        await new Promise((r) => setTimeout(r, BLOCKED_MS));
        const before = overflows();
        await a.track(orderId);
        if (overflows() > before) blockedAt = i;
      }
      expect(blockedAt).toBeDefined();
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
