import { ErrorCode } from '@app/contracts';
import { ConnectionLimiter } from './connection-limiter';
import type { Principal } from './principal';
import { Scope } from './scopes';
import { StreamTicketStore } from './stream-tickets';
import { authorizeRead } from './order-access';
import { redactUrl } from './redact';

const alice: Principal = {
  subject: 'alice',
  scopes: new Set([Scope.OrdersRead]),
  expiresAtMs: Date.now() + 3_600_000,
};

describe('StreamTicketStore', () => {
  it('redeems a ticket once, for its order, before it expires', () => {
    let now = 1_000;
    const store = new StreamTicketStore({ ttlMs: 500, now: () => now });
    const a = store.issue(alice, 'o-1');
    expect(store.redeem(a.ticket, 'o-1')).toBe(alice);
    expect(() => store.redeem(a.ticket, 'o-1')).toThrow(
      expect.objectContaining({ code: ErrorCode.Unauthenticated }),
    );
    const b = store.issue(alice, 'o-1');
    now += 500;
    expect(() => store.redeem(b.ticket, 'o-1')).toThrow(/unknown, used or expired/);
    const c = store.issue(alice, 'o-1');
    expect(() => store.redeem(c.ticket, 'o-2')).toThrow(/another order/);
    expect(() => store.redeem(c.ticket, 'o-1')).toThrow(/unknown, used or expired/);
    expect(store.size).toBe(0);
  });

  it('never outlives the token and bounds tickets per subject', () => {
    const store = new StreamTicketStore({ ttlMs: 60_000, maxPerSubject: 2 });
    const shortLived = { ...alice, expiresAtMs: Date.now() + 1_000 };
    expect(store.issue(shortLived, 'o').expiresAtMs).toBe(shortLived.expiresAtMs);
    store.issue(alice, 'o');
    expect(() => store.issue(alice, 'o')).toThrow(
      expect.objectContaining({ code: ErrorCode.ResourceExhausted }),
    );
  });
});

describe('ConnectionLimiter', () => {
  it('refuses the slot over the limit and frees it on release (idempotently)', () => {
    const limiter = new ConnectionLimiter(2);
    const r1 = limiter.acquire('a');
    limiter.acquire('a');
    expect(() => limiter.acquire('a')).toThrow(
      expect.objectContaining({ code: ErrorCode.ResourceExhausted }),
    );
    limiter.acquire('b');
    r1();
    r1();
    expect(limiter.count('a')).toBe(1);
    expect(new ConnectionLimiter(0).acquire('x')).toEqual(expect.any(Function));
  });
});

describe('authorizeRead', () => {
  it('lets the owner and orders:read:any holders read, and nobody else', () => {
    expect(() => authorizeRead(alice, 'o', 'alice')).not.toThrow();
    // Someone else's order looks exactly like one that does not exist.
    expect(() => authorizeRead(alice, 'o', 'bob')).toThrow(
      expect.objectContaining({ code: ErrorCode.NotFound, message: 'order o not found' }),
    );
    expect(() => authorizeRead(alice, 'o', undefined)).toThrow(
      expect.objectContaining({ code: ErrorCode.NotFound, reason: 'forbidden' }),
    );
    const support = { ...alice, scopes: new Set([Scope.OrdersReadAny]) };
    expect(() => authorizeRead(support, 'o', 'bob')).not.toThrow();
    const writer = { ...alice, scopes: new Set([Scope.OrdersWrite]) };
    expect(() => authorizeRead(writer, 'o', 'alice')).toThrow(/lacks scope orders:read/);
  });
});

describe('redactUrl', () => {
  it('hides ticket values', () => {
    expect(redactUrl('/v1/orders/a/stream?after=3&ticket=abc-DEF_1&x=1')).toBe(
      '/v1/orders/a/stream?after=3&ticket=[REDACTED]&x=1',
    );
  });
});
