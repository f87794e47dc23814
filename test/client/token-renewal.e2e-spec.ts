import { OrderStatus } from '@app/order-domain/order-status';
import { watchOrder, type OrderWatch } from '@app/client/node';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import {
  ALL_TRANSPORTS,
  closeWatches,
  baseUrlFor,
  connectionLog,
  range,
  record,
  shippedOrder,
  track,
  type Recorded,
} from './client-harness';

/** 4 s tokens (exp has whole seconds): renewed 1.3 s before expiry, after two thirds. */
const TOKEN_TTL_S = 4;
const LIFETIMES = 3;
const TRACK_EVERY_MS = 50;

/**
 * With a token source that renews ahead of expiry, one stream lives across three token
 * lifetimes on every transport: no `token_expired` end, no refusal, no retry, and every
 * seq exactly once. The service ends a stream at its token's expiry (no clock
 * tolerance), so a renewal that did not move the stream to the new token shows as an end.
 */
describe('token renewal without a break', () => {
  let app: TestApp;
  const watches: OrderWatch[] = [];

  beforeAll(async () => {
    app = await startTestApp({ AUTH_CLOCK_TOLERANCE_S: '0' });
  });
  afterAll(async () => {
    await closeWatches(watches);
    await app.close();
  });

  it(`keeps a stream on every transport for ${LIFETIMES} token lifetimes without an expiry end`, async () => {
    const mint = () => app.token({ sub: 'alice', scopes: ['orders:read'], ttlS: TOKEN_TTL_S });
    const runs = await Promise.all(
      ALL_TRANSPORTS.map(async (transport) => {
        const orderId = `renew-${transport}`;
        await shippedOrder(app, orderId, 'alice');
        const log: Recorded['connection'] = [];
        const watch = watchOrder(orderId, {
          transport,
          baseUrl: baseUrlFor(app, transport),
          token: mint(),
          getToken: mint,
          longPollWaitS: 5,
          onConnection: connectionLog(log),
        });
        watches.push(watch);
        return { transport, orderId, watch, rec: record(watch, log) };
      }),
    );
    await waitFor(() => runs.every((r) => r.watch.cursor === 4), 'history delivered');
    const deadline = performance.now() + LIFETIMES * TOKEN_TTL_S * 1000;
    const last = new Map<string, number>();
    while (performance.now() < deadline) {
      for (const r of runs) last.set(r.orderId, await track(app, r.orderId));
      await new Promise((resolve) => setTimeout(resolve, TRACK_EVERY_MS));
    }
    for (const r of runs) await app.publish(r.orderId, OrderStatus.Delivered);
    for (const r of runs) {
      const end = await r.watch.done;
      await r.rec.finished;
      const events = r.rec.connection.map((c) => c.e);
      expect({ transport: r.transport, end: end.reason }).toEqual({
        transport: r.transport,
        end: 'completed',
      });
      expect(r.rec.seqs()).toEqual(range(1, last.get(r.orderId)! + 1));
      expect(r.rec.kinds('gap')).toEqual([]);
      expect({
        transport: r.transport,
        interruptions: events.filter((e) => e.type === 'retrying'),
      }).toEqual({ transport: r.transport, interruptions: [] });
      expect(
        events.filter(
          (e) => e.type === 'token' && e.reason !== 'expiring' && e.reason !== 'renewed',
        ),
      ).toEqual([]);
      // Renewed ahead of each expiry (the refresh point itself: token-source.spec).
      expect(r.watch.stats.tokenRefreshes).toBeGreaterThanOrEqual(LIFETIMES - 1);
      // Long-poll sends the token with every poll; the others move to a new connection.
      const renewed = events.filter((e) => e.type === 'token' && e.reason === 'renewed');
      if (r.transport === 'longpoll') expect(renewed).toEqual([]);
      else expect(renewed.length).toBeGreaterThanOrEqual(LIFETIMES - 1);
    }
  });
});
