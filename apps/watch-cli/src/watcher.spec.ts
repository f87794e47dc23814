import { nowUs, ResetReason } from '@app/contracts/stream-envelope';
import { ORDER_DOMAIN, OrderStatus } from '@app/order-domain';
import { PAYLOAD_DOMAIN } from '@app/payload-domain';
import { itemLine } from './watcher';

const payload = PAYLOAD_DOMAIN as unknown as Parameters<typeof itemLine>[0];
const order = ORDER_DOMAIN as unknown as Parameters<typeof itemLine>[0];

describe('itemLine', () => {
  const event = { orderId: 'p', seq: 7, publishedAtUs: nowUs(), payload: 'xxxx' };

  it("prints an event's seq, kind, latency and the domain's summary", () => {
    expect(itemLine(payload, { kind: 'event', event })).toMatch(
      /^[\d:.]+ {2}#7 {5}payload {11}\s+[\d.]+ ms {2}4 bytes$/,
    );
  });

  it("prints a reset with the domain's snapshot summary when it has one", () => {
    const snapshot = { orderId: 'o', lastSeq: 4, updatedAtUs: 1, status: OrderStatus.Shipped };
    const reset = {
      kind: 'reset',
      reset: { reason: ResetReason.BeyondRetention, snapshot },
    } as const;
    expect(itemLine(order, reset)).toMatch(
      / {2}reset \(beyond_retention\): now at seq 4, shipped$/,
    );
    expect(itemLine(payload, reset)).toMatch(/ {2}reset \(beyond_retention\): now at seq 4$/);
  });

  it('names the domain when its stream is finished, and prints nothing for other ends', () => {
    expect(itemLine(order, { kind: 'end', reason: 'completed', lastSeq: 6 })).toMatch(
      / {2}order finished \(seq 6\)$/,
    );
    expect(itemLine(payload, { kind: 'end', reason: 'aborted', lastSeq: 6 })).toBeUndefined();
  });

  it('prints skipped ranges and gaps', () => {
    const skipped = { kind: 'skipped', skipped: { fromSeq: 2, toSeq: 3, reason: 'overflow' } };
    expect(itemLine(payload, skipped as Parameters<typeof itemLine>[1])).toContain(
      'skipped #2..#3 (overflow)',
    );
    expect(itemLine(payload, { kind: 'gap', fromSeq: 5, toSeq: 6 })).toContain('LOST #5..#6');
  });
});
