import { execFileSync } from 'node:child_process';
import {
  credentials,
  loadPackageDefinition,
  status as GrpcCode,
  type ServiceClientConstructor,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { io } from 'socket.io-client';
import { request } from 'undici';
import {
  ORDER_STATUS_PROTO_PATH,
  OrderStatus,
  PROTO_LOADER_OPTIONS,
  type OrderEvent,
  type ProtoSubscribeResponse,
} from '@app/contracts';
import { startLocalStack, type LocalStack } from '../../deploy/stack/local-stack';
import { ORDERS_NAMESPACE } from '../../apps/order-status/src/transports/ws/orders-ws.events';
import { bearerInterceptor, type OrderStatusClient } from '../grpc/grpc-test-client';
import { bearer, DEFAULT_TEST_TOKEN, testAuthEnv } from '../support/auth';
import { authorizedEventSource } from '../support/event-source';
import { waitFor } from '../support/wait-for';

const nginxInstalled = (() => {
  try {
    execFileSync('nginx', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
if (!nginxInstalled) {
  process.stderr.write(
    'SKIPPED stack failover test: nginx is not installed (apt-get install -y nginx-light)\n',
  );
}

const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);

/**
 * The real stack (redis-server, two built instances, nginx with the shipped config): an
 * instance is SIGKILLed while clients stream through nginx; they reconnect through nginx
 * to the survivor, resume from their last seq and lose nothing.
 */
(nginxInstalled ? describe : describe.skip)(
  'stack: an instance dies under streaming clients',
  () => {
    let stack: LocalStack;
    const cleanups: (() => void)[] = [];
    let stopped = false;

    beforeAll(async () => {
      stack = await startLocalStack({
        freePorts: true,
        // The test keys (every client below sends the default test token); quiet, no
        // simulator, fast SSE reconnects: the test drives the order itself.
        env: {
          ...testAuthEnv(),
          LOG_LEVEL: 'warn',
          SIMULATOR_ENABLED: 'false',
          SSE_RETRY_MS: '200',
        },
        log: () => undefined,
      });
    }, 60_000);
    afterAll(async () => {
      stopped = true;
      for (const c of cleanups.splice(0)) c();
      await stack?.stop();
    });

    it('SSE, gRPC and socket.io clients lose nothing when instance A is SIGKILLed', async () => {
      const base = stack.urls.http;
      /** A status change, or (`'tracking'`) a tracking update of the shipped order. */
      const publish = async (status: OrderStatus | 'tracking'): Promise<OrderEvent> => {
        const tracking = status === 'tracking';
        const res = await request(`${base}/v1/orders/f1/${tracking ? 'tracking' : 'status'}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...bearer() },
          body: JSON.stringify(
            tracking
              ? { location: { lat: 52.5, lon: 13.4 }, etaMs: 1_900_000_000_000 }
              : { status },
          ),
        });
        // Right after the kill nginx may still send a POST over a kept-alive connection to
        // the dead instance; the reset means it never got there, but nginx does not resend
        // non-idempotent requests: it answers 502, and this publisher retries.
        if (res.statusCode === 502) {
          await res.body.dump();
          return publish(status);
        }
        expect(res.statusCode).toBe(201);
        return (await res.body.json()) as OrderEvent;
      };
      await publish(OrderStatus.Created);
      // The instances really check tokens (with the test keys): none, no entry.
      const anonymous = await request(`${base}/v1/orders/f1/status`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ status: OrderStatus.Shipped }),
      });
      await anonymous.body.dump();
      expect(anonymous.statusCode).toBe(401);

      // Several SSE clients: nginx spreads them over both instances. Each reconnect sends
      // the token again (the header is set on every fetch).
      const sse: number[][] = [];
      for (let i = 0; i < 4; i++) {
        const seen: number[] = [];
        sse.push(seen);
        const es = authorizedEventSource(`${base}/v1/orders/f1/stream`);
        for (const name of ['status', 'tracking']) {
          es.addEventListener(name, (m) => seen.push(Number(JSON.parse(m.data).seq)));
        }
        es.addEventListener('end', () => es.close());
        cleanups.push(() => es.close());
      }

      // gRPC through nginx (TLS, h2), resuming from the last seq after any failure.
      const pkg = loadPackageDefinition(
        loadSync(ORDER_STATUS_PROTO_PATH, PROTO_LOADER_OPTIONS),
      ) as {
        orderstatus: { v1: { OrderStatusService: ServiceClientConstructor } };
      };
      const grpcSeen: number[] = [];
      let grpcDone = false;
      const client = new pkg.orderstatus.v1.OrderStatusService(
        stack.urls.grpc,
        credentials.createSsl(Buffer.from(stack.tlsCert)),
        { interceptors: [bearerInterceptor(DEFAULT_TEST_TOKEN)] },
      ) as unknown as OrderStatusClient;
      cleanups.push(() => client.close());
      const follow = () => {
        const call = client.subscribe({ orderId: 'f1', afterSeq: grpcSeen.at(-1) ?? 0 });
        call.on('data', (m: ProtoSubscribeResponse) => {
          if ('event' in m && m.event) grpcSeen.push(Number(m.event.seq));
          else if ('tracking' in m && m.tracking) grpcSeen.push(Number(m.tracking.seq));
        });
        call.on('error', () => undefined);
        call.on('status', (s) => {
          if (s.code === GrpcCode.OK) grpcDone = true;
          else if (!stopped) setTimeout(follow, 100);
        });
        cleanups.push(() => call.cancel());
      };
      follow();

      // socket.io with reconnection on: every (re)connect subscribes from the last seq.
      const wsSeen: number[] = [];
      let wsDone = false;
      const socket = io(`${base}${ORDERS_NAMESPACE}`, {
        transports: ['websocket'],
        auth: { token: DEFAULT_TEST_TOKEN },
        reconnectionDelay: 100,
        reconnectionDelayMax: 500,
      });
      cleanups.push(() => socket.close());
      socket.on('connect', () => {
        socket.emit('subscribe', { orderId: 'f1', afterSeq: wsSeen.at(-1) ?? 0 }, () => undefined);
      });
      socket.on('status', (e: OrderEvent) => wsSeen.push(e.seq));
      socket.on('tracking', (e: OrderEvent) => wsSeen.push(e.seq));
      socket.on('end', (e: { reason: string }) => {
        if (e.reason === 'completed') wsDone = true;
      });

      await waitFor(
        () => sse.every((s) => s.length === 1) && grpcSeen.length === 1 && wsSeen.length === 1,
        'every client to see the created event',
        10_000,
      );
      const [a] = stack.instances;
      const health = await request(`http://127.0.0.1:${a.httpPort}/health`);
      const { subscribers } = (await health.body.json()) as { subscribers: number };
      expect(subscribers).toBeGreaterThan(0); // some clients really were on A

      for (const step of [
        OrderStatus.Paid,
        OrderStatus.Packed,
        OrderStatus.Shipped,
        'tracking',
        'tracking',
      ] as const) {
        await publish(step); // 2..6
      }
      await waitFor(() => sse.every((s) => s.length === 6), 'seq 6 everywhere', 10_000);
      a.process.kill('SIGKILL');
      for (let i = 0; i < 5; i++) await publish('tracking'); // 7..11, A is gone
      await publish(OrderStatus.Delivered); // 12

      const all = range(1, 12);
      await waitFor(
        () => sse.every((s) => s.length >= 12) && grpcDone && wsDone,
        'every client to reach the end through B',
        20_000,
      );
      for (const seen of sse) expect(seen).toEqual(all);
      expect(grpcSeen).toEqual(all);
      expect(wsSeen).toEqual(all);
    });
  },
);
