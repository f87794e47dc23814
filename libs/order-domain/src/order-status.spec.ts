import fc from 'fast-check';
import {
  acceptsTracking,
  canTransition,
  isOrderStatus,
  isTerminalStatus,
  ORDER_STATUS_SEQUENCE,
  ORDER_STATUSES,
  OrderStatus,
  TRACKING_STATUSES,
  transitionRefusal,
} from './order-status';

const status = fc.constantFrom(...ORDER_STATUSES);
const nonTerminal = ORDER_STATUSES.filter((s) => !isTerminalStatus(s));
const rank = (s: OrderStatus) => ORDER_STATUS_SEQUENCE.indexOf(s);

describe('order status', () => {
  it('lists every status, the life cycle in order, and two terminals', () => {
    expect(new Set(ORDER_STATUSES)).toEqual(new Set(Object.values(OrderStatus)));
    expect(ORDER_STATUS_SEQUENCE).toEqual([
      OrderStatus.Created,
      OrderStatus.Paid,
      OrderStatus.Packed,
      OrderStatus.Shipped,
      OrderStatus.OutForDelivery,
      OrderStatus.Delivered,
    ]);
    expect(ORDER_STATUSES.filter(isTerminalStatus).sort()).toEqual(
      [OrderStatus.Cancelled, OrderStatus.Delivered].sort(),
    );
  });

  it('isOrderStatus accepts exactly the enum values', () => {
    for (const s of ORDER_STATUSES) expect(isOrderStatus(s)).toBe(true);
    for (const v of ['CREATED', 'Created', '', ' paid', 1, null, undefined, {}, ['paid']]) {
      expect(isOrderStatus(v)).toBe(false);
    }
  });

  describe('canTransition', () => {
    it('a new order must start at created', () => {
      expect(canTransition(undefined, OrderStatus.Created)).toBe(true);
      for (const s of ORDER_STATUSES.filter((x) => x !== OrderStatus.Created)) {
        expect(canTransition(undefined, s)).toBe(false);
      }
    });

    it('nothing follows a terminal status, not even itself', () => {
      fc.assert(
        fc.property(
          fc.constantFrom(OrderStatus.Delivered, OrderStatus.Cancelled),
          status,
          (t, n) => {
            expect(canTransition(t, n)).toBe(false);
          },
        ),
      );
    });

    it('cancelled may follow any non-terminal status', () => {
      for (const s of nonTerminal) expect(canTransition(s, OrderStatus.Cancelled)).toBe(true);
    });

    it('repeating the current status is refused: every status change is a real change', () => {
      for (const s of ORDER_STATUSES) {
        expect(canTransition(s, s)).toBe(false);
        expect(transitionRefusal('o1', s, s)).toBe(
          `order o1 is already ${s}: a status change must change the status`,
        );
      }
    });

    it('between life-cycle statuses, only forward moves are allowed', () => {
      fc.assert(
        fc.property(
          fc.constantFrom(...nonTerminal),
          fc.constantFrom(...ORDER_STATUS_SEQUENCE),
          (from, to) => {
            expect(canTransition(from, to)).toBe(rank(to) > rank(from));
            expect(transitionRefusal('o1', from, to) === undefined).toBe(rank(to) > rank(from));
          },
        ),
      );
    });

    it('explains a backward move with both statuses', () => {
      expect(transitionRefusal('o1', OrderStatus.Shipped, OrderStatus.Paid)).toBe(
        'order o1 cannot move from shipped to paid',
      );
    });

    it('every path of allowed moves never goes backwards and stops at a terminal', () => {
      fc.assert(
        fc.property(fc.array(status, { maxLength: 30 }), (attempts) => {
          let current: OrderStatus | undefined;
          const path: OrderStatus[] = [];
          for (const next of attempts) {
            if (canTransition(current, next)) {
              current = next;
              path.push(next);
            }
          }
          if (path.length > 0) expect(path[0]).toBe(OrderStatus.Created);
          path.forEach((s, i) => {
            if (i > 0) {
              expect(isTerminalStatus(path[i - 1])).toBe(false);
              expect(s).not.toBe(path[i - 1]);
              if (s !== OrderStatus.Cancelled) expect(rank(s)).toBeGreaterThan(rank(path[i - 1]));
            }
          });
        }),
      );
    });
  });

  it('accepts tracking updates while shipped or out for delivery, and only then', () => {
    expect(TRACKING_STATUSES).toEqual([OrderStatus.Shipped, OrderStatus.OutForDelivery]);
    for (const s of ORDER_STATUSES) expect(acceptsTracking(s)).toBe(TRACKING_STATUSES.includes(s));
    expect(TRACKING_STATUSES.some(isTerminalStatus)).toBe(false);
  });
});
