import { StreamEventBus } from '@app/event-bus';
import { ORDER_DOMAIN } from '@app/order-domain';
import { InMemoryStreamStore } from '@app/store';
import type { AuthState } from '../auth/auth-state';
import { CLOSE_GRACE_MS, gracefulShutdown } from './graceful-shutdown';
import { Readiness } from './readiness.service';

/** An in-process auth state has no connection: always up. */
const AUTH_STATE = {} as AuthState;

describe('gracefulShutdown', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  /** Runs the shutdown with a connection that never leaves; returns when each step ran. */
  async function withStuckConnection(drainMs: number) {
    const store = new InMemoryStreamStore({ domain: ORDER_DOMAIN });
    const bus = new StreamEventBus(store);
    const readiness = new Readiness(store, AUTH_STATE);
    readiness.markReady();
    bus.stats.connectionOpened('sse');
    const startedAt = performance.now();
    let closedAfterMs = -1;
    let graceGiven = -1;
    let appClosedAfterMs = -1;
    const done = gracefulShutdown({
      readiness,
      bus,
      drainMs,
      reconnectJitterMs: 0,
      stopAccepting: () => undefined,
      afterAdvice: () => undefined,
      closeConnections: async (graceMs) => {
        closedAfterMs = performance.now() - startedAt;
        graceGiven = graceMs;
        await new Promise((r) => setTimeout(r, graceMs));
        return 1;
      },
      closeApp: () => {
        appClosedAfterMs = performance.now() - startedAt;
        return Promise.resolve();
      },
    });
    await jest.advanceTimersByTimeAsync(drainMs + CLOSE_GRACE_MS);
    await done;
    readiness.onModuleDestroy();
    return { closedAfterMs, graceGiven, appClosedAfterMs };
  }

  it('ends the wait for clients early enough that the last grace also fits in the drain window', async () => {
    const drainMs = 2 * CLOSE_GRACE_MS + 200;
    const r = await withStuckConnection(drainMs);
    expect(r.graceGiven).toBe(CLOSE_GRACE_MS);
    // The wait for clients polls: it ends within one poll of its own deadline.
    expect(r.closedAfterMs).toBeGreaterThanOrEqual(drainMs - CLOSE_GRACE_MS);
    expect(r.closedAfterMs).toBeLessThan(drainMs - CLOSE_GRACE_MS + 50);
    expect(r.appClosedAfterMs).toBeLessThanOrEqual(drainMs + 50);
  });

  it('gives at most half of a short window to the last grace', async () => {
    const r = await withStuckConnection(300);
    expect(r.graceGiven).toBe(150);
    expect(r.appClosedAfterMs).toBeLessThanOrEqual(300 + 50);
  });
});
