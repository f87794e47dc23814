import {
  OrderStatus,
  snapshotAfter,
  type OrderEvent,
  type OrderSnapshot,
  type Tracking,
} from '@app/contracts';
import fc from 'fast-check';
import { OrderState } from './order-state';

const BASE: OrderSnapshot = {
  orderId: 'o-1',
  status: OrderStatus.Shipped,
  lastSeq: 4,
  updatedAtUs: 1_000,
  tracking: { location: { lat: 1, lon: 2 }, etaMs: 5_000 },
  ownerId: 'customer-1',
};

const STATUSES = [OrderStatus.Shipped, OrderStatus.OutForDelivery, OrderStatus.Delivered];

/** What the state is read with or given, in turn. */
type Op =
  | { readonly op: 'status'; readonly status: OrderStatus }
  | { readonly op: 'tracking'; readonly lat: number }
  | { readonly op: 'read' }
  | { readonly op: 'replace'; readonly withBase: boolean };

const ops = fc.array(
  fc.oneof(
    fc.record({ op: fc.constant('status' as const), status: fc.constantFrom(...STATUSES) }),
    fc.record({ op: fc.constant('tracking' as const), lat: fc.integer({ min: -90, max: 90 }) }),
    fc.constant({ op: 'read' as const }),
    fc.record({ op: fc.constant('replace' as const), withBase: fc.boolean() }),
  ),
  { maxLength: 60 },
);

function eventFor(op: Op, seq: number, status: OrderStatus): OrderEvent {
  const common = { orderId: 'o-1', seq, publishedAtUs: 1_000 + seq };
  if (op.op === 'tracking') {
    const tracking: Tracking = { location: { lat: op.lat, lon: 3 }, etaMs: 9_000 + seq };
    return { ...common, status, ...tracking };
  }
  return { ...common, status: op.op === 'status' ? op.status : status };
}

describe('OrderState', () => {
  it('reads as snapshotAfter applied to every event in turn, whenever it is read', () => {
    fc.assert(
      fc.property(ops, fc.boolean(), fc.boolean(), (list, startKnown, withOwner) => {
        const ownerId = withOwner ? 'customer-1' : undefined;
        const state = new OrderState(startKnown ? BASE : undefined, ownerId);
        let expected: OrderSnapshot | undefined = startKnown ? BASE : undefined;
        for (const op of list) {
          if (op.op === 'read') {
            expect(state.snapshot()).toStrictEqual(expected);
            // Key order too: it is the JSON's field order on the wire.
            expect(JSON.stringify(state.snapshot())).toBe(JSON.stringify(expected));
          } else if (op.op === 'replace') {
            expected = op.withBase ? BASE : undefined;
            state.replace(expected);
          } else {
            const event = eventFor(op, state.lastSeq + 1, state.status ?? OrderStatus.Created);
            expected = snapshotAfter(expected, event, ownerId);
            state.apply(event);
          }
          expect(state.lastSeq).toBe(expected?.lastSeq ?? 0);
          expect(state.status).toBe(expected?.status);
          expect(state.known).toBe(expected !== undefined);
        }
        expect(state.snapshot()).toStrictEqual(expected);
      }),
    );
  });

  it('builds no snapshot while nobody reads it, then one shared by every reader', () => {
    const state = new OrderState(BASE);
    const before = state.snapshot();
    state.apply({ orderId: 'o-1', seq: 5, status: OrderStatus.Shipped, publishedAtUs: 2_000 });
    expect(state.lastSeq).toBe(5);
    const after = state.snapshot();
    expect(after).not.toBe(before);
    expect(state.snapshot()).toBe(after);
    expect(after).toMatchObject({ lastSeq: 5, tracking: BASE.tracking });
    // The bus's state carries no owner once it has applied an event, as snapshotAfter.
    expect(after).not.toHaveProperty('ownerId');
  });
});
