import { OrderStatus } from '@app/order-domain/order-status';
import {
  watchOrder,
  type OrderWatch,
  type TransportName,
  type WatchOptions,
} from '@app/client/node';
import { restartOnSamePorts, startRestartableApp } from '../support/restart-app';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import {
  ALL_TRANSPORTS,
  baseUrlFor,
  connectionLog,
  range,
  record,
  shippedOrder,
  track,
  trackThenDeliver,
  type Recorded,
  openStreams,
} from './client-harness';

const FORCED_RECONNECTS = 50;

interface Handle {
  readonly constructor: { readonly name: string };
  /** Set on the sockets a server accepted: the service runs in this process too. */
  readonly server?: unknown;
}

/**
 * What keeps this process alive on the client's side: its timers (Node's own view) and
 * its sockets. The service runs in the same process, so its accepted sockets (which a
 * keep-alive or a drain may hold a moment longer) are left out.
 */
function resources(): { timers: number; clientSockets: number } {
  const handles = (process as unknown as { _getActiveHandles(): Handle[] })._getActiveHandles();
  return {
    timers: process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length,
    clientSockets: handles.filter((h) => h.constructor.name === 'Socket' && !h.server).length,
  };
}

/**
 * The client library against the real service, in Node, on every transport: what ends
 * a connection (a forced drop, a restart, the maximum stream age, an expiring token, a
 * resume point the service cannot serve) never costs an event or shows one twice, the
 * service's reconnect advice is followed, permanent refusals end the watch, and an abort
 * leaves nothing behind.
 */
describe.each(ALL_TRANSPORTS)('client library over %s (Node)', (transport: TransportName) => {
  let app: TestApp | undefined;
  /** The service for the tests that need no special configuration. */
  let shared: TestApp;
  const watches: OrderWatch[] = [];

  beforeAll(async () => {
    shared = await startTestApp();
  });
  afterAll(async () => {
    await shared.close();
  });

  afterEach(async () => {
    for (const w of watches.splice(0)) {
      w.close();
      await w.done;
    }
    await app?.close();
    app = undefined;
  });

  function start(a: TestApp, orderId: string, extra: Partial<WatchOptions> = {}) {
    const log: Recorded['connection'] = [];
    const watch = watchOrder(orderId, {
      transport,
      baseUrl: baseUrlFor(a, transport),
      token: a.defaultToken,
      longPollWaitS: 5,
      onConnection: connectionLog(log),
      ...extra,
    });
    watches.push(watch);
    return { watch, rec: record(watch, log) };
  }

  it(`loses nothing and shows nothing twice across ${FORCED_RECONNECTS} forced reconnects`, async () => {
    const a = shared;
    await shippedOrder(a, 'fr-1');
    const { watch, rec } = start(a, 'fr-1');
    await waitFor(() => watch.cursor === 4, 'history delivered');
    let last = 4;
    for (let i = 0; i < FORCED_RECONNECTS; i++) {
      last = await track(a, 'fr-1');
      await waitFor(() => watch.cursor === last, `event ${last} delivered`, 5_000, 2);
      watch.reconnect();
      // Published while the connection is down or being reopened: must come on resume.
      last = await track(a, 'fr-1');
    }
    await a.publish('fr-1', OrderStatus.Delivered);
    const end = await watch.done;
    await rec.finished;
    expect(end).toMatchObject({ kind: 'end', reason: 'completed', lastSeq: last + 1 });
    expect(rec.seqs()).toEqual(range(1, last + 1));
    expect(rec.kinds('gap')).toEqual([]);
    expect(watch.stats.lost).toBe(0);
    expect(watch.stats.reconnects).toBeGreaterThanOrEqual(FORCED_RECONNECTS);
    expect(watch.stats.resumes).toBe(watch.stats.reconnects);
  });

  it('resumes after a server restart, after the delay the server advised', async () => {
    const env = { SHUTDOWN_RECONNECT_JITTER_MS: '300', SHUTDOWN_DRAIN_MS: '2000' };
    const first = await startRestartableApp(env);
    app = first;
    await shippedOrder(first, 'rs-1');
    const { watch, rec } = start(first, 'rs-1');
    await waitFor(() => watch.cursor === 4, 'history delivered');
    // The stream (for long-poll: the next held poll) is open, so the shutdown advises it.
    await waitFor(() => openStreams(first) === 1, 'stream open on the server');
    const second = await restartOnSamePorts(first, env, (a) => (app = a));
    // Without Redis the order is re-created with the same history.
    await shippedOrder(second, 'rs-1');
    const five = await track(second, 'rs-1');
    await waitFor(() => watch.cursor === five, 'resumed after the restart', 15_000);
    await second.publish('rs-1', OrderStatus.Delivered);
    await watch.done;
    await rec.finished;
    expect(rec.seqs()).toEqual(range(1, 6));
    expect(watch.stats).toMatchObject({ lost: 0, resumes: watch.stats.reconnects });
    expect(watch.stats.reconnects).toBeGreaterThanOrEqual(1);
    // The shutdown's advice (SSE retry:, socket.io retryAfterMs, Retry-After, gRPC
    // retry-after-ms) was the delay, and no attempt came before it was over.
    const advised = rec.connection.findIndex(
      (c) => c.e.type === 'retrying' && c.e.reason === 'shutdown',
    );
    expect(advised).toBeGreaterThanOrEqual(0);
    const retry = rec.connection[advised];
    if (retry.e.type !== 'retrying') throw new Error('unreachable');
    expect(retry.e.advisedMs).toBeGreaterThanOrEqual(100);
    expect(retry.e.delayMs).toBe(retry.e.advisedMs);
    const next = rec.connection.slice(advised).find((c) => c.e.type === 'connecting');
    expect(next).toBeDefined();
    expect(next!.at - retry.at).toBeGreaterThanOrEqual(retry.e.advisedMs! - 2);
  });

  it('resumes after the maximum stream age (or a long-poll hold) with nothing lost', async () => {
    app = await startTestApp({
      STREAM_MAX_AGE_MS: '250',
      STREAM_MAX_AGE_JITTER_MS: '0',
      SSE_RETRY_MS: '100',
    });
    const a = app;
    await shippedOrder(a, 'ma-1');
    // Long-poll: a 1 s hold, so holds end with 204 while events keep coming.
    const { watch, rec } = start(a, 'ma-1', { longPollWaitS: 1 });
    // Events keep coming across at least two ended streams (long-poll: 1.4 s of them); a
    // loaded host can take longer than the age to reconnect, so the count decides, not a clock.
    const maxAgeEnds = () =>
      rec.connection.filter((c) => c.e.type === 'retrying' && c.e.reason === 'max_age');
    const started = performance.now();
    let last = 4;
    for (;;) {
      last = await track(a, 'ma-1');
      await new Promise((r) => setTimeout(r, 40));
      const elapsed = performance.now() - started;
      if (elapsed > 15_000) break;
      if (elapsed < 1_400) continue;
      if (transport === 'longpoll' || maxAgeEnds().length >= 2) break;
    }
    await a.publish('ma-1', OrderStatus.Delivered);
    await watch.done;
    await rec.finished;
    expect(rec.seqs()).toEqual(range(1, last + 1));
    expect(watch.stats.lost).toBe(0);
    if (transport !== 'longpoll') {
      const ends = maxAgeEnds();
      expect(ends.length).toBeGreaterThanOrEqual(2);
      if (transport === 'sse') {
        // SSE: the `retry:` reconnection time (SSE_RETRY_MS) is the advice.
        for (const c of ends) expect(c.e).toMatchObject({ advisedMs: 100, delayMs: 100 });
      }
    }
  });

  it('after the token expires, resumes with a token from getToken() and loses nothing', async () => {
    app = await startTestApp({ AUTH_CLOCK_TOLERANCE_S: '0' });
    const a = app;
    await shippedOrder(a, 'te-1', 'alice');
    // 2 s tokens (exp has whole seconds: 1 s could already be over when it is used).
    const mint = () => a.token({ sub: 'alice', scopes: ['orders:read'], ttlS: 2 });
    let minted = 0;
    const { watch, rec } = start(a, 'te-1', {
      token: mint(),
      getToken: () => {
        minted++;
        return mint();
      },
      // No refresh ahead of time: the stream must end with token_expired first.
      refreshBeforeExpiryMs: -60_000,
    });
    const last = await trackThenDeliver(a, 'te-1');
    const end = await watch.done;
    await rec.finished;
    expect(end.reason).toBe('completed');
    expect(rec.seqs()).toEqual(range(1, last + 1));
    expect(watch.stats.lost).toBe(0);
    expect(minted).toBeGreaterThanOrEqual(1);
    const renewals = rec.connection.filter(
      (c) => c.e.type === 'token' && (c.e.reason === 'expired' || c.e.reason === 'refused'),
    );
    expect(renewals.length).toBeGreaterThanOrEqual(1);
  });

  it('asks getToken() ahead of expiry, so the stream resumes without a refusal', async () => {
    app = await startTestApp({ AUTH_CLOCK_TOLERANCE_S: '0' });
    const a = app;
    await shippedOrder(a, 'tr-1', 'alice');
    const mint = () => a.token({ sub: 'alice', scopes: ['orders:read'], ttlS: 3 });
    const { watch, rec } = start(a, 'tr-1', {
      token: mint(),
      getToken: mint,
      refreshBeforeExpiryMs: 1_500,
    });
    await waitFor(() => watch.stats.tokenRefreshes >= 1, 'token refreshed ahead of expiry', 5_000);
    const last = await track(a, 'tr-1');
    await waitFor(() => watch.cursor === last, 'event after the refresh');
    await a.publish('tr-1', OrderStatus.Delivered);
    await watch.done;
    await rec.finished;
    expect(rec.seqs()).toEqual(range(1, last + 1));
    expect(rec.connection.some((c) => c.e.type === 'token' && c.e.reason === 'expiring')).toBe(
      true,
    );
    expect(rec.connection.some((c) => c.e.type === 'token' && c.e.reason === 'refused')).toBe(
      false,
    );
  });

  it('takes a reset when the resume point is ahead of the order, then follows it', async () => {
    const a = shared;
    await shippedOrder(a, 'rr-1');
    const { watch, rec } = start(a, 'rr-1', { after: 40 });
    await waitFor(() => rec.kinds('reset').length === 1, 'reset received');
    expect(watch.cursor).toBe(4);
    const five = await track(a, 'rr-1');
    await waitFor(() => watch.cursor === five, 'event after the reset');
    expect(rec.items.map((i) => i.kind)).toEqual(['reset', 'tracking']);
    expect(rec.kinds('reset')[0]).toMatchObject({
      reset: { reason: 'ahead_of_last_seq', snapshot: { lastSeq: 4, status: 'shipped' } },
    });
  });

  it('ends with a clear error on a refused token (getToken asked once), 404 and 400', async () => {
    const a = shared;
    await shippedOrder(a, 'pf-1');
    let asked = 0;
    const refused = start(a, 'pf-1', {
      token: 'not-a-token',
      getToken: () => {
        asked++;
        return 'still-not-a-token';
      },
    });
    const end = await refused.watch.done;
    expect(end).toMatchObject({ reason: 'error', error: { code: 'unauthenticated' } });
    expect(asked).toBe(1);

    // A token without a read scope.
    const forbidden = start(a, 'pf-1', {
      token: a.token({ sub: 'bob', scopes: ['orders:write'] }),
    });
    expect(await forbidden.watch.done).toMatchObject({
      reason: 'error',
      error: { code: 'permission_denied' },
    });
    const missing = start(a, 'no-such-order');
    expect(await missing.watch.done).toMatchObject({
      reason: 'error',
      error: { code: 'not_found' },
    });
    const invalid = start(a, 'bad id!');
    expect(await invalid.watch.done).toMatchObject({
      reason: 'error',
      error: { code: 'invalid_argument' },
    });
    for (const w of [refused, forbidden, missing, invalid]) {
      expect(w.rec.connection.filter((c) => c.e.type === 'connecting').length).toBeLessThanOrEqual(
        2,
      );
    }
  });

  it('abort() ends the watch and leaves no timer, socket or server stream behind', async () => {
    const a = shared;
    await shippedOrder(a, 'ab-1');
    const before = resources();
    const abort = new AbortController();
    const { watch, rec } = start(a, 'ab-1', { signal: abort.signal });
    await waitFor(() => watch.cursor === 4, 'history delivered');
    abort.abort();
    expect(await watch.done).toMatchObject({ kind: 'end', reason: 'aborted', lastSeq: 4 });
    await rec.finished;
    await waitFor(() => openStreams(a) === 0, 'server released the stream');
    // Sockets close asynchronously: wait (bounded) until this process holds what it held.
    await waitFor(
      () => {
        const now = resources();
        return now.timers <= before.timers && now.clientSockets <= before.clientSockets
          ? now
          : undefined;
      },
      `no timer or socket left (before ${JSON.stringify(before)}, now ${JSON.stringify(resources())})`,
      3_000,
      20,
    );

    // Aborted while waiting to retry (server gone): the backoff timer goes too.
    const baseline = resources();
    const down = start(a, 'ab-1', {
      baseUrl: transport === 'grpc' ? '127.0.0.1:1' : 'http://127.0.0.1:1',
    });
    await waitFor(
      () => down.rec.connection.some((c) => c.e.type === 'retrying'),
      'first attempt failed',
    );
    down.watch.close();
    expect((await down.watch.done).reason).toBe('aborted');
    await waitFor(
      () => (resources().timers <= baseline.timers ? true : undefined),
      'no backoff timer left',
      3_000,
      20,
    );
  });
});
