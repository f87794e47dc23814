import type { ClientHttp2Session } from 'node:http2';
import { orderStatusClient, type OrderStatusClient } from '../grpc/grpc-test-client';
import { bearer, testToken } from '../support/auth';
import { Canary } from './support/canary';
import { h2OpenAndCancel, socketIoSubscribeAndLeave } from './support/cancel-floods';
import {
  connectionsLeftAtDrain,
  startHostileService,
  type HostileService,
} from './support/hostile-service';
import { gaugesBackTo } from './support/metrics';
import { grpcSubscribeBody, grpcSubscribeHeaders, h2Session } from './support/stalled-clients';
import { ALL_OPEN, isLive, streamAccess } from './support/stream-access';

/** The per-principal limit the floods run into if their slots leak. */
const LIMIT = 20;
/** Cancelled streams per flood: several times the limit, bounded. */
const FLOOD = 120;
const WS_FLOOD = 40;
/** Events published while each flood runs; the canary must see every one. */
const EVENTS_PER_FLOOD = 20;
const DRAIN_MS = 10_000;
/** SIGTERM with nothing left to drain must not wait for the drain window. */
const PROMPT_EXIT_MS = 3_000;
/** Released slots and subscriptions show in the gauges within this bound. */
const SETTLE_MS = 3_000;

const ORDER = 'flood-1';

/**
 * Issue 10, 1b: streams cancelled as soon as they are requested (HTTP/2 RST_STREAM,
 * gRPC cancel, socket.io disconnect) must give back their slot and bus subscription, at
 * whatever point of the guard, the handler or registration the cancel lands. One service
 * process for the file, one principal per flood (each flood's leak is its own), and a
 * canary beside them on the plain port; SIGTERM at the end must find nothing to drain.
 */
describe('open-and-cancel floods (issue 10, 1b)', () => {
  let service: HostileService;
  let session: ClientHttp2Session;
  let grpc: OrderStatusClient;
  let canary: Canary;
  let lastSeq = 0;

  beforeAll(async () => {
    service = await startHostileService({
      LIMIT_CONNECTIONS_PER_PRINCIPAL: String(LIMIT),
      SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
      SHUTDOWN_RECONNECT_JITTER_MS: '0',
    });
    lastSeq = await service.publish(ORDER, 1, { create: true });
    canary = new Canary(service.httpUrl, ORDER);
    await canary.reached(lastSeq, 5_000);
    session = await h2Session(service.httpsUrl, service.ca);
  });

  afterEach(() => grpc?.close());

  afterAll(async () => {
    canary?.close();
    session?.destroy();
    await service?.kill();
  });

  /** Runs `flood` while events are published, then checks what the issue asks for. */
  async function during(
    subject: string,
    transport: string,
    flood: (token: string) => Promise<void>,
  ): Promise<void> {
    const token = testToken({ sub: subject, ttlS: 600 });
    grpc = orderStatusClient(service.grpcAddress, {}, token);
    const [, seq] = await Promise.all([flood(token), service.publish(ORDER, EVENTS_PER_FLOOD)]);
    lastSeq = seq;

    service.assertAlive();
    expect(await isLive(service.httpUrl)).toBe(true);
    // Baseline: the canary's one SSE stream; nothing of the flood stays open.
    const baseline = transport === 'sse' ? 1 : 0;
    await gaugesBackTo(
      service.httpUrl,
      transport,
      { connections: baseline, subscribers: baseline },
      SETTLE_MS,
    );
    // The principal is not locked out anywhere.
    expect(
      await streamAccess({ session, grpc, httpUrl: service.httpUrl, token, orderId: ORDER }),
    ).toEqual(ALL_OPEN);
    // The canary saw every event, in order, once.
    await canary.reached(lastSeq, 5_000);
    canary.expectEverything(lastSeq);
  }

  it('SSE over HTTP/2: HEADERS then RST_STREAM CANCEL, 120 times', async () => {
    await during('flood-sse', 'sse', (token) =>
      h2OpenAndCancel(
        session,
        { ':path': `/v1/orders/${ORDER}/stream`, accept: 'text/event-stream', ...bearer(token) },
        FLOOD,
      ),
    );
  });

  it('long-poll over HTTP/2: held polls cancelled at once, 120 times', async () => {
    await during('flood-poll', 'long-poll', (token) =>
      h2OpenAndCancel(
        session,
        // After the last seq, so each poll would hold for 30 s if not cancelled.
        { ':path': `/v1/orders/${ORDER}/events?after=${lastSeq}&wait=30`, ...bearer(token) },
        FLOOD,
      ),
    );
  });

  it('gRPC: Subscribe cancelled right after the call starts, 120 times', async () => {
    const grpcSession = await h2Session(`http://${service.grpcAddress}`);
    try {
      await during('flood-grpc', 'grpc', (token) =>
        h2OpenAndCancel(grpcSession, grpcSubscribeHeaders(token), FLOOD, grpcSubscribeBody(ORDER)),
      );
    } finally {
      grpcSession.destroy();
    }
  });

  it('socket.io: connect, subscribe and disconnect at once, 40 times', async () => {
    await during('flood-ws', 'ws', (token) =>
      socketIoSubscribeAndLeave(service.httpUrl, token, ORDER, WS_FLOOD),
    );
  });

  it('SIGTERM after the floods exits promptly with no connection left', async () => {
    canary.close();
    session.destroy();
    const { code, tookMs } = await service.sigterm();
    expect({ code, left: connectionsLeftAtDrain(service) }).toEqual({ code: 0, left: 0 });
    expect(tookMs).toBeLessThan(PROMPT_EXIT_MS);
  });
});
