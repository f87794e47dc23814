import {
  watchOrder,
  type OrderWatch,
  type TransportName,
  type WatchOptions,
} from '@app/client/node';
import { stablePort } from '../support/stable-port';
import { startTestApp, type TestApp } from '../support/test-app';
import {
  ALL_TRANSPORTS,
  closeWatches,
  baseUrlFor,
  connectionLog,
  record,
  shippedOrder,
  type Recorded,
} from './client-harness';

/** The status each transport's refusal of a bad token carries (gRPC: UNAUTHENTICATED). */
const UNAUTHENTICATED_STATUS: Record<TransportName, number> = {
  sse: 401,
  ws: 401,
  websocket: 401,
  longpoll: 401,
  grpc: 16,
};

/**
 * Failures that say why, on every transport: a connection that cannot be made names the
 * URL and the cause (refused, an untrusted certificate), a watch that never connects
 * gives up within its bounds, and a refusal has the same shape everywhere.
 */
describe.each(ALL_TRANSPORTS)('failures over %s (Node)', (transport: TransportName) => {
  let app: TestApp;
  const watches: OrderWatch[] = [];

  beforeAll(async () => {
    app = await startTestApp();
    await shippedOrder(app, 'fail-1');
  });
  afterEach(async () => {
    await closeWatches(watches);
  });
  afterAll(async () => {
    await app.close();
  });

  function start(extra: Partial<WatchOptions>) {
    const log: Recorded['connection'] = [];
    const watch = watchOrder('fail-1', {
      transport,
      baseUrl: baseUrlFor(app, transport),
      token: app.defaultToken,
      backoff: { baseMs: 20, maxMs: 50 },
      onConnection: connectionLog(log),
      ...extra,
    });
    watches.push(watch);
    return { watch, rec: record(watch, log) };
  }

  it('gives up on a refused connection within giveUpAfterMs, naming the URL and the cause', async () => {
    const address = `127.0.0.1:${await stablePort()}`;
    const baseUrl = transport === 'grpc' ? address : `http://${address}`;
    const { watch, rec } = start({ baseUrl, giveUpAfterMs: 400 });
    const end = await watch.done;
    if (end.reason !== 'error') throw new Error(`ended ${end.reason}`);
    expect(end.error.network).toEqual({
      url: expect.stringContaining(address),
      cause: 'refused',
    });
    expect(end.error.message).toMatch(
      /gave up after \d+ attempt\(s\) in \d+ ms without a connection/,
    );
    expect(end.error.message).toContain(address);
    expect(end.error.message).toContain('connection refused');
    // Each retry before it (none if the first attempt outlasted the bound) says the same.
    for (const c of rec.connection) {
      if (c.e.type === 'retrying') expect(c.e.error?.network?.cause).toBe('refused');
    }
  });

  it('stops after maxAttempts; an untrusted certificate says so', async () => {
    // gRPC listens in plaintext here: a refused connection stands in for the TLS case.
    const baseUrl = transport === 'grpc' ? `127.0.0.1:${await stablePort()}` : app.httpsUrl;
    const { watch, rec } = start({ baseUrl, maxAttempts: 2 });
    const end = await watch.done;
    if (end.reason !== 'error') throw new Error(`ended ${end.reason}`);
    expect(rec.connection.filter((c) => c.e.type === 'connecting')).toHaveLength(2);
    expect(end.error.message).toMatch(/gave up after 2 attempt\(s\)/);
    if (transport !== 'grpc') {
      expect(end.error.network?.cause).toBe('tls');
      expect(end.error.message).toContain('TLS certificate not trusted');
      // The URL it connected to: the raw WebSocket's is wss://.
      const url = app.httpsUrl.replace(/\/$/, '');
      expect(end.error.message).toContain(
        transport === 'websocket' ? url.replace(/^https/, 'wss') : url,
      );
    }
  });

  it('refuses a bad token with the same error shape as every transport', async () => {
    const { watch } = start({ token: 'not-a-token' });
    const end = await watch.done;
    if (end.reason !== 'error') throw new Error(`ended ${end.reason}`);
    expect(end.error).toMatchObject({
      code: 'unauthenticated',
      status: UNAUTHENTICATED_STATUS[transport],
      permanent: true,
    });
    expect(end.error.message).toMatch(
      /\((HTTP 401|gRPC 16|socket\.io unauthenticated|WebSocket 4401)\)$/,
    );
  });
});
