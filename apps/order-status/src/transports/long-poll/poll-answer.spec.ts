import {
  itemOf,
  OrderStatus,
  ResetReason,
  SkipReason,
  type OrderStatusChanged,
  type StreamItem,
  type TrackingUpdated,
} from '@app/contracts';
import type { PollResult } from '@app/event-bus';
import { POLL_EVENT_JSON, pollBody, pollBodyJson } from './poll-answer';

const status = (seq: number): OrderStatusChanged => ({
  orderId: 'o-ü-"1"',
  seq,
  status: OrderStatus.Paid,
  previousStatus: OrderStatus.Created,
  publishedAtUs: 1_764_470_000_000_000 + seq,
  padding: 'x\u{1F600}',
});
const tracking = (seq: number): TrackingUpdated => ({
  orderId: 'o-ü-"1"',
  seq,
  status: OrderStatus.Shipped,
  publishedAtUs: 1_764_470_000_000_000 + seq,
  location: { lat: 52.5, lon: 13.4 },
  etaMs: 1_764_473_600_000,
});
const skipped = (fromSeq: number, toSeq: number): StreamItem => ({
  kind: 'skipped',
  skipped: { fromSeq, toSeq, reason: SkipReason.Overflow },
});
const reset: StreamItem = {
  kind: 'reset',
  reset: {
    reason: ResetReason.BeyondRetention,
    snapshot: { orderId: 'o-ü-"1"', status: OrderStatus.Paid, lastSeq: 9, updatedAtUs: 5 },
  },
};

describe('pollBodyJson', () => {
  const results: [string, PollResult][] = [
    ['events', { items: [itemOf(status(2)), itemOf(tracking(3))], completed: false }],
    ['a completed order', { items: [itemOf(status(4))], completed: true }],
    ['a reset first', { items: [reset, itemOf(status(10))], completed: false }],
    ['a skipped range first', { items: [skipped(2, 4), itemOf(tracking(5))], completed: false }],
    // A second non-event cuts the batch (see PollBody).
    [
      'a cut batch',
      { items: [itemOf(status(2)), skipped(3, 4), itemOf(status(5))], completed: true },
    ],
    ['nothing but a skipped range', { items: [skipped(2, 4)], completed: false }],
  ];

  it.each(results)('%s: the text JSON.stringify(pollBody()) gave', (_name, result) => {
    expect(pollBodyJson('o-ü-"1"', 1, result)).toBe(JSON.stringify(pollBody('o-ü-"1"', 1, result)));
  });

  it('serializes one event once for every poll that carries it', () => {
    const e = status(20);
    const before = POLL_EVENT_JSON.encodings;
    for (let i = 0; i < 1000; i++) {
      // Each poll gets its own item around the one event (as from the bus).
      const result: PollResult = { items: [itemOf(e)], completed: false };
      pollBodyJson(e.orderId, 19, result);
    }
    expect(POLL_EVENT_JSON.encodings - before).toBe(1);
  });
});
