import { ResetReason, SkipReason } from '@app/contracts/stream-envelope';
import { type StreamItem } from '@app/order-domain/order-events';
import { OrderStatus } from '@app/order-domain/order-status';
import { Cursor } from './cursor';

const ev = (seq: number): StreamItem => ({
  kind: 'event',
  event: { orderId: 'o', seq, status: OrderStatus.Paid, publishedAtUs: 0 },
});
const skipped = (fromSeq: number, toSeq: number): StreamItem => ({
  kind: 'skipped',
  skipped: { fromSeq, toSeq, reason: SkipReason.Overflow },
});
const reset = (lastSeq: number): StreamItem => ({
  kind: 'reset',
  reset: {
    reason: ResetReason.AheadOfLastSeq,
    snapshot: { orderId: 'o', status: OrderStatus.Paid, lastSeq, updatedAtUs: 0 },
  },
});

describe('Cursor', () => {
  it('accepts the next seq, drops what it has seen, reports what nobody accounted for', () => {
    const c = new Cursor(0);
    expect(c.admit(ev(1))).toEqual({ accept: true });
    expect(c.admit(ev(1))).toEqual({ accept: false });
    expect(c.admit(ev(4))).toEqual({ accept: true, gap: { kind: 'gap', fromSeq: 2, toSeq: 3 } });
    expect(c.value).toBe(4);
    expect(c.admit(ev(3))).toEqual({ accept: false });
  });

  it('moves past a skipped range, which is no gap; a range partly seen is still accepted', () => {
    const c = new Cursor(2);
    expect(c.admit(skipped(3, 5))).toEqual({ accept: true });
    expect(c.value).toBe(5);
    expect(c.admit(skipped(4, 5))).toEqual({ accept: false });
    expect(c.admit(skipped(4, 7))).toEqual({ accept: true });
    expect(c.admit(skipped(10, 11))).toEqual({
      accept: true,
      gap: { kind: 'gap', fromSeq: 8, toSeq: 9 },
    });
  });

  it('takes a reset whatever the cursor, even backwards', () => {
    const c = new Cursor(9);
    expect(c.admit(reset(4))).toEqual({ accept: true });
    expect(c.value).toBe(4);
    expect(c.admit(ev(5))).toEqual({ accept: true });
  });
});
