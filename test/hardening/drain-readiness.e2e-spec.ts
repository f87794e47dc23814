import { request } from 'undici';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

/** A connection the drain waits for, standing in for a client that is slow to leave. */
const HOLD = 'drain-test';

/**
 * While the service drains for shutdown, `/health/ready` still answers (503), on the
 * plain port and on the TLS port, so load balancers and probes see "not ready" rather than
 * a refused connection; the listeners close when the drain ends. With nothing connected,
 * shutdown is prompt.
 */
describe('readiness during drain', () => {
  let app: TestApp;
  afterEach(async () => {
    await app.close();
  });

  it('answers /health/ready with 503 until the drain ends, then the listeners close', async () => {
    app = await startTestApp({ SHUTDOWN_DRAIN_MS: '10000' });
    expect((await request(`${app.httpUrl}/health/ready`)).statusCode).toBe(200);
    app.bus.stats.connectionOpened(HOLD);
    const closing = app.close();
    let done = false;
    void closing.then(() => (done = true));

    const ready = await request(`${app.httpUrl}/health/ready`, { reset: true });
    expect(ready.statusCode).toBe(503);
    expect(await ready.body.json()).toMatchObject({ status: 'error' });
    const live = await request(`${app.httpUrl}/health/live`, { reset: true });
    expect(live.statusCode).toBe(200);
    await live.body.dump();
    // API requests on a new connection get the drain gate's reconnect advice.
    const api = await request(`${app.httpUrl}/v1/orders/x-1`, {
      headers: app.authHeaders,
      reset: true,
    });
    expect(api.statusCode).toBe(503);
    expect(Number(api.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    await api.body.dump();
    expect(done).toBe(false);

    app.bus.stats.connectionClosed(HOLD);
    await waitFor(() => done, 'shutdown finished once the drain ended', 5_000);
    await expect(request(`${app.httpUrl}/health/ready`, { reset: true })).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
  });

  it('shuts down promptly when nothing is connected', async () => {
    app = await startTestApp({ SHUTDOWN_DRAIN_MS: '10000' });
    const startedAt = performance.now();
    await app.close();
    expect(performance.now() - startedAt).toBeLessThan(1_500);
  });
});
