import { OrderStatus } from '@app/order-domain/order-status';
import { watchOrder, type OrderWatch } from '@app/client/node';
import { TcpGate } from '../support/tcp-gate';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { connectionLog, range, record, shippedOrder, track, type Recorded } from './client-harness';

/** The watch's backoff cap: a resume must follow readiness within one such step. */
const BACKOFF_MAX_MS = 200;
/**
 * How long the service stays down, counted in the watch's failed attempts (each at most
 * one step apart): past grpc-js's first reconnect backoff (1 s), so its second (1.6 s) is
 * running when the service comes back.
 */
const FAILURES_WHILE_DOWN = 20;
/** Connecting and opening on a loaded machine, on top of the backoff step. */
const CONNECT_SLACK_MS = 1_000;

/**
 * A crash (the port refused, no shutdown advice) and the service back on the same port:
 * the gRPC watch resumes within one backoff step of the service being ready, and its
 * first attempt after that opens, instead of failing on the channel's stale
 * ECONNREFUSED until grpc-js's own reconnect backoff (seconds, growing) runs out.
 */
describe('client library over gRPC after a crash', () => {
  let app: TestApp;
  let gate: TcpGate;
  let watch: OrderWatch | undefined;

  beforeAll(async () => {
    app = await startTestApp();
    gate = await TcpGate.listen(app.ports.grpc);
  });
  afterAll(async () => {
    watch?.close();
    await watch?.done;
    await gate.close();
    await app.close();
  });

  it('resumes within one backoff step of the service being ready', async () => {
    await shippedOrder(app, 'crash-1');
    const log: Recorded['connection'] = [];
    watch = watchOrder('crash-1', {
      transport: 'grpc',
      baseUrl: `127.0.0.1:${gate.port}`,
      token: app.defaultToken,
      backoff: { baseMs: 50, maxMs: BACKOFF_MAX_MS },
      giveUpAfterMs: 60_000,
      onConnection: connectionLog(log),
    });
    const w = watch;
    const rec = record(w, log);
    await waitFor(() => w.cursor === 4, 'history delivered');

    await gate.crash();
    const crashed = performance.now();
    const failed = () =>
      log.filter((c) => c.at > crashed && c.e.type === 'retrying' && c.e.error !== undefined);
    await waitFor(
      () => failed().length >= FAILURES_WHILE_DOWN,
      'attempts refused while down',
      15_000,
    );
    const five = await track(app, 'crash-1');
    await gate.restart();
    const ready = performance.now();

    await waitFor(() => w.cursor === five, 'resumed after the restart', 20_000);
    const opened = log.find((c) => c.at > ready && c.e.type === 'open');
    expect(opened).toBeDefined();
    const resumeMs = opened!.at - ready;
    // The first attempt begun once the service was ready, and what came of it (an attempt
    // begun before can fail after: its refusal is handled later on a loaded host).
    const begun = log.findIndex((c) => c.at > ready && c.e.type === 'connecting');
    expect(begun).toBeGreaterThanOrEqual(0);
    const outcome = log.slice(begun + 1).find((c) => c.e.type !== 'connecting');
    console.log(
      `gRPC crash: resumed ${resumeMs.toFixed(0)} ms after ready (backoff step <= ${BACKOFF_MAX_MS} ms), ` +
        `${failed().length} attempt(s) refused while down`,
    );
    // The first attempt made after readiness opened: none failed on a stale error.
    expect(outcome?.e).toMatchObject({ type: 'open', afterSeq: 4, reconnect: true });
    expect(resumeMs).toBeLessThan(BACKOFF_MAX_MS + CONNECT_SLACK_MS);

    await app.publish('crash-1', OrderStatus.Delivered);
    await rec.finished;
    expect(rec.seqs()).toEqual(range(1, 6));
    expect(w.stats.lost).toBe(0);
  });
});
