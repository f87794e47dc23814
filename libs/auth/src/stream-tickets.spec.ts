import { ErrorCode } from '@app/contracts';
import { InMemoryConnectionLimiter } from './connection-limiter';
import type { Principal } from './principal';
import { Scope } from './scopes';
import {
  flat,
  expectEstimateCovers,
  HEAP_MEASURE_TIMEOUT_MS,
  retainedHeap,
} from '../../contracts/src/testing/retained-heap';
import {
  InMemoryStreamTicketStore,
  isWellFormedTicket,
  newTicket,
  ticketEntryBytes,
} from './stream-tickets';
import { decodeTicketEntry, encodeTicketEntry } from './ticket-codec';
import { authorizeRead } from './order-access';
import { redactUrl } from './redact';

// Weighing the heap in a process shared with other spec files: memory an earlier one
// releases between the two readings can make one impossible (a negative size was seen in
// CI); each test here builds its own structures, so a second run of it decides.
jest.retryTimes(2, { logErrorsBeforeRetry: true });

const alice: Principal = {
  subject: 'alice',
  scopes: new Set([Scope.OrdersRead]),
  expiresAtMs: Date.now() + 3_600_000,
};

describe('InMemoryStreamTicketStore', () => {
  it('redeems a ticket once, for its order, before it expires', async () => {
    let now = 1_000;
    const store = new InMemoryStreamTicketStore({ ttlMs: 500, now: () => now });
    const a = await store.issue(alice, 'o-1');
    expect(isWellFormedTicket(a.ticket)).toBe(true);
    await expect(store.redeem(a.ticket, 'o-1')).resolves.toBe(alice);
    await expect(store.redeem(a.ticket, 'o-1')).rejects.toMatchObject({
      code: ErrorCode.Unauthenticated,
    });
    const b = await store.issue(alice, 'o-1');
    now += 500;
    await expect(store.redeem(b.ticket, 'o-1')).rejects.toThrow(/unknown, used or expired/);
    const c = await store.issue(alice, 'o-1');
    await expect(store.redeem(c.ticket, 'o-2')).rejects.toThrow(/another order/);
    await expect(store.redeem(c.ticket, 'o-1')).rejects.toThrow(/unknown, used or expired/);
    expect(store.size).toBe(0);
  });

  it('never outlives the token and bounds tickets per subject', async () => {
    const store = new InMemoryStreamTicketStore({ ttlMs: 60_000, maxPerSubject: 2 });
    const shortLived = { ...alice, expiresAtMs: Date.now() + 1_000 };
    expect((await store.issue(shortLived, 'o')).expiresAtMs).toBe(shortLived.expiresAtMs);
    await store.issue(alice, 'o');
    await expect(store.issue(alice, 'o')).rejects.toMatchObject({
      code: ErrorCode.ResourceExhausted,
    });
  });
});

describe('InMemoryStreamTicketStore memory', () => {
  /** A principal of its own per ticket, with the longest subject a token may carry. */
  const principal = (i: number): Principal => ({
    subject: flat(String(i).padStart(128, 's')),
    scopes: new Set([Scope.OrdersRead]),
    expiresAtMs: Date.now() + 3_600_000,
  });
  const orderId = 'o'.repeat(64);

  it('refuses a ticket past its byte bound, with retry advice, and never drops one issued', async () => {
    let now = 1_000;
    const one = ticketEntryBytes(newTicket(), { principal: principal(0), orderId, expiresAtMs: 0 });
    const store = new InMemoryStreamTicketStore({
      ttlMs: 30_000,
      maxBytes: one * 3,
      now: () => now,
    });
    const issued = [];
    for (let i = 1; i <= 3; i++) issued.push(await store.issue(principal(i), orderId));
    now += 10_000;
    for (let i = 4; i <= 50; i++) {
      await expect(store.issue(principal(i), orderId)).rejects.toMatchObject({
        code: ErrorCode.ResourceExhausted,
        retryAfterMs: 20_000, // when the oldest ticket expires
      });
    }
    expect(store.memoryUse).toMatchObject({
      structure: 'stream_tickets',
      entries: 3,
      refusals: 47,
      evictions: 0,
    });
    expect(store.memoryUse.bytes).toBeLessThanOrEqual(one * 3);
    // Every ticket issued still works; spending one makes room for another.
    await expect(store.redeem(issued[0].ticket, orderId)).resolves.toMatchObject({
      subject: principal(1).subject,
    });
    await store.issue(principal(51), orderId);
    for (const { ticket } of issued.slice(1)) await store.redeem(ticket, orderId);
    expect(store.memoryUse.entries).toBe(1);
  });

  it(
    'its estimate is at least the heap a ticket really holds, and not far above',
    async () => {
      const store = new InMemoryStreamTicketStore({ maxPerSubject: 1, maxBytes: 1024 ** 3 });
      const { bytes } = await retainedHeap(async () => {
        for (let i = 0; i < 5_000; i++) await store.issue(principal(i), orderId);
        return store;
      });
      const estimated = store.memoryUse.bytes;
      expect(store.size).toBe(5_000);
      expectEstimateCovers(bytes, estimated);
    },
    HEAP_MEASURE_TIMEOUT_MS,
  );
});

describe('ticket entries outside the process', () => {
  it('round-trip, and anything malformed is no ticket', () => {
    const entry = { principal: alice, orderId: 'o-1', expiresAtMs: 123 };
    const back = decodeTicketEntry(encodeTicketEntry(entry));
    expect(back).toEqual(entry);
    expect(back?.principal.scopes).toEqual(new Set([Scope.OrdersRead]));
    for (const bad of ['', 'null', '{}', '[1]', '{"sub":1}', 'not json']) {
      expect(decodeTicketEntry(bad)).toBeUndefined();
    }
    expect(isWellFormedTicket('short')).toBe(false);
    expect(isWellFormedTicket(`${'a'.repeat(42)}}`)).toBe(false);
  });
});

describe('InMemoryConnectionLimiter', () => {
  it('refuses the slot over the limit, with retry advice, and frees it on release (idempotently)', () => {
    const limiter = new InMemoryConnectionLimiter(2);
    const r1 = limiter.acquire('a');
    limiter.acquire('a');
    expect(() => limiter.acquire('a')).toThrow(
      expect.objectContaining({ code: ErrorCode.ResourceExhausted, retryAfterMs: 5_000 }),
    );
    limiter.acquire('b');
    r1();
    r1();
    expect(limiter.count('a')).toBe(1);
    expect(new InMemoryConnectionLimiter(0).acquire('x')).toEqual(expect.any(Function));
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
