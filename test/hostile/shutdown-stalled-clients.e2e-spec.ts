import { connect as h2Connect, type ClientHttp2Session } from 'node:http2';
import type { ClientReadableStream } from '@grpc/grpc-js';
import type { ProtoSubscribeResponse } from '@app/order-domain';
import { orderStatusClient, type OrderStatusClient } from '../grpc/grpc-test-client';
import { bearer } from '../support/auth';
import { TcpGate } from '../support/tcp-gate';
import { once, waitFor } from '../support/wait-for';
import {
  connectionsLeftAtDrain,
  startHostileService,
  type HostileService,
} from './support/hostile-service';
import { readGauges, of } from './support/metrics';
import {
  stalledHttp1,
  stalledSocketIo,
  stalledWebSocket,
  type StalledClient,
} from './support/stalled-clients';

/** Short, so a shutdown that waits for the hard deadline (drain + 5 s) costs seconds. */
const DRAIN_MS = 2_500;
/** What the process may take beyond the drain window to exit once everything is closed. */
const EXIT_SLACK_MS = 750;
/** Events published before the clients open: each replays them into its unread buffers. */
const EVENTS_BEFORE = 20;
const PAYLOAD_BYTES = 60_000;

const ENV: Record<string, string> = {
  // Events of a chosen size are the load test's own domain's, not the order's.
  STREAM_DOMAIN: 'payload',
  SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
  SHUTDOWN_RECONNECT_JITTER_MS: '0',
  STREAM_END_GRACE_MS: '500',
  // Large enough that nothing but shutdown ends a stream or a connection during the test.
  STREAM_MAX_AGE_MS: '600000',
  WS_PING_INTERVAL_MS: '60000',
  WS_PING_TIMEOUT_MS: '60000',
  BUS_QUEUE_CAPACITY: '1000',
};

/**
 * Issue 35, 1: SIGTERM while subscribers have stopped reading, so the reconnect advice,
 * the close frame, the trailers and GOAWAY never reach them and they never answer. Once
 * every stream has been advised and the end grace has passed, what remains are sockets:
 * the service must destroy them and exit 0 within `SHUTDOWN_DRAIN_MS`, on every listener.
 */
describe('SIGTERM with subscribers that stopped reading (issue 35, 1)', () => {
  let service: HostileService | undefined;
  const stalled: StalledClient[] = [];
  const sessions: ClientHttp2Session[] = [];
  const grpcClients: OrderStatusClient[] = [];
  const gates: TcpGate[] = [];

  afterEach(async () => {
    for (const c of stalled.splice(0)) c.destroy();
    for (const s of sessions.splice(0)) s.destroy();
    for (const c of grpcClients.splice(0)) c.close();
    for (const g of gates.splice(0)) await g.close();
    await service?.kill();
    service = undefined;
  });

  /** A service with one busy stream of big events, so every new subscriber has megabytes to read. */
  async function busyService(orderId: string): Promise<HostileService> {
    service = await startHostileService(ENV);
    await service.publish(orderId, EVENTS_BEFORE, { bytes: PAYLOAD_BYTES });
    return service;
  }

  /**
   * SIGTERM once `streams` subscribers (by transport) are open: exit 0, within the drain
   * window. With `stuck`, connections outlived the grace and the service says it destroyed
   * them.
   */
  async function expectPromptExit(
    s: HostileService,
    streams: Readonly<Record<string, number>>,
    stuck = false,
  ) {
    await waitFor(
      async () => {
        const { subscribers } = await readGauges(s.httpUrl);
        return Object.entries(streams).every(([t, n]) => of(subscribers, t) === n);
      },
      `subscribers open: ${JSON.stringify(streams)}`,
    );
    const { code, tookMs } = await s.sigterm();
    expect({ code, advised: connectionsLeftAtDrain(s) !== undefined }).toEqual({
      code: 0,
      advised: true,
    });
    expect(tookMs).toBeLessThan(DRAIN_MS + EXIT_SLACK_MS);
    if (stuck) {
      expect(s.proc.lines.join('\n')).toMatch(/\d+ connections still open after .* destroyed/);
    }
  }

  it('socket.io and raw WebSocket: websockets that stop reading and never answer the close frame', async () => {
    const s = await busyService('sd-ws');
    stalled.push(
      ...(await Promise.all([
        ...[0, 1, 2].map((i) =>
          stalledSocketIo({ label: `socket.io #${i}`, httpUrl: s.httpUrl, orderId: 'sd-ws' }),
        ),
        ...[0, 1].map((i) =>
          stalledWebSocket({ label: `websocket #${i}`, httpUrl: s.httpUrl, orderId: 'sd-ws' }),
        ),
      ])),
    );
    await expectPromptExit(s, { ws: 3, websocket: 2 }, true);
  });

  it('HTTP/2: SSE streams on a TLS session that stops reading (no GOAWAY ever read)', async () => {
    const s = await busyService('sd-h2');
    const gate = await TcpGate.listen(s.httpsPort);
    gates.push(gate);
    const session = h2Connect(`https://127.0.0.1:${gate.port}`, {
      ca: s.ca,
      servername: 'localhost',
    });
    session.on('error', () => undefined);
    sessions.push(session);
    await once(session, 'connect');
    for (let i = 0; i < 2; i++) {
      const stream = session.request({
        ':path': '/v1/orders/sd-h2/stream?after=0',
        accept: 'text/event-stream',
        ...bearer(),
      });
      stream.on('error', () => undefined);
      await once(stream, 'response');
    }
    gate.freeze();
    await expectPromptExit(s, { sse: 2 }, true);
  });

  // These two passed before the fix too (grpc-js destroys its sessions at the drain's end,
  // and the stream life cycle's end grace destroys a stalled HTTP/1.1 socket); they guard
  // that it stays so, on one service.
  it('gRPC and HTTP/1.1 SSE: grpc-js calls paused by their reader, a gRPC connection and SSE sockets that stop reading', async () => {
    const s = await busyService('sd-mix');
    const paused = orderStatusClient(s.grpcAddress);
    const gate = await TcpGate.listen(Number(s.grpcAddress.split(':')[1]));
    gates.push(gate);
    const frozen = orderStatusClient(`127.0.0.1:${gate.port}`);
    grpcClients.push(paused, frozen);
    const calls: ClientReadableStream<ProtoSubscribeResponse>[] = [
      paused.subscribe({ orderId: 'sd-mix' }),
      paused.subscribe({ orderId: 'sd-mix' }),
      frozen.subscribe({ orderId: 'sd-mix' }),
    ];
    for (const call of calls) {
      call.on('error', () => undefined);
      // The first event arrived: the stream is open; from now on nothing more is read.
      await once(call, 'data');
      call.pause();
    }
    gate.freeze();
    const path = '/v1/orders/sd-mix/stream?after=0';
    stalled.push(
      ...(await Promise.all([
        stalledHttp1({ label: 'plain #0', port: s.httpPort, path }),
        stalledHttp1({ label: 'plain #1', port: s.httpPort, path }),
        stalledHttp1({ label: 'tls #0', port: s.httpsPort, ca: s.ca, path }),
      ])),
    );
    await expectPromptExit(s, { grpc: 3, sse: 3 });
  });
});
