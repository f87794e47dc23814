import {
  itemOf,
  OrderStatus,
  ResetReason,
  SkipReason,
  type OrderStatusChanged,
  type StreamItem,
} from '@app/contracts';
import { itemFrame, SSE_FRAMES } from './sse-frames';

const event = (seq: number): OrderStatusChanged => ({
  orderId: 'o-ü-"1"',
  seq,
  status: OrderStatus.Paid,
  previousStatus: OrderStatus.Created,
  publishedAtUs: 1_764_470_000_000_001,
  padding: 'x\u{1F600}y',
});

describe('SSE_FRAMES', () => {
  const items: [string, StreamItem][] = [
    ['a status change', itemOf(event(7))],
    [
      'a tracking update',
      itemOf({
        orderId: 'o-1',
        seq: 8,
        status: OrderStatus.Shipped,
        publishedAtUs: 2,
        location: { lat: 52.5, lon: 13.4 },
        etaMs: 3,
      }),
    ],
    [
      'a reset',
      {
        kind: 'reset',
        reset: {
          reason: ResetReason.Gap,
          snapshot: { orderId: 'o-1', status: OrderStatus.Paid, lastSeq: 9, updatedAtUs: 5 },
        },
      },
    ],
    [
      'a skipped range',
      { kind: 'skipped', skipped: { fromSeq: 3, toSeq: 8, reason: SkipReason.Overflow } },
    ],
  ];

  it.each(items)('%s: the UTF-8 bytes res.write(itemFrame(item)) wrote', (_name, item) => {
    expect(SSE_FRAMES.get(item).equals(Buffer.from(itemFrame(item), 'utf8'))).toBe(true);
  });

  it('encodes one event once for every stream that writes it', () => {
    const e = event(10);
    const before = SSE_FRAMES.encodings;
    const frames = new Set(Array.from({ length: 1000 }, () => SSE_FRAMES.get(itemOf(e))));
    expect(SSE_FRAMES.encodings - before).toBe(1);
    expect(frames.size).toBe(1);
  });
});
