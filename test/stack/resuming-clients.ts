import {
  credentials,
  loadPackageDefinition,
  status as GrpcCode,
  type ServiceClientConstructor,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { EventSource } from 'eventsource';
import { io } from 'socket.io-client';
import { Agent, fetch as undiciFetch } from 'undici';
import { ORDER_STATUS_PROTO_PATH, PROTO_LOADER_OPTIONS } from '@app/contracts';
import { type OrderEvent, type ProtoSubscribeResponse } from '@app/order-domain';
import { ORDERS_NAMESPACE } from '../../apps/order-status/src/transports/ws/orders-ws.events';
import { bearerInterceptor, type OrderStatusClient } from '../grpc/grpc-test-client';

/** Where a stack's nginx answers, and the credentials its clients need. */
export interface StackEndpoints {
  /** `http://host:port`: SSE over HTTP/1.1 and socket.io. */
  readonly http: string;
  /** `https://host:port`: SSE over HTTP/2 (ALPN h2); omitted, no HTTP/2 client. */
  readonly https?: string;
  /** `host:port` of nginx's gRPC (TLS) listener. */
  readonly grpc: string;
  /** PEM of the certificate nginx presents. */
  readonly ca: string;
  readonly token: string;
}

/** Clients that follow one order through a stack and resume from their last seq. */
export interface ResumingClients {
  /** Each client's received seqs (status and tracking items), by client name. */
  readonly seen: ReadonlyMap<string, readonly number[]>;
  /** Every client saw at least `count` items. */
  allSaw(count: number): boolean;
  /** Every client was told that the order's stream completed. */
  allDone(): boolean;
  /** One line per client: its seqs, whether it completed, its last failure. */
  describe(): string;
  close(): void;
}

const RECONNECT_DELAY_MS = 100;

/**
 * `sseClients` EventSources over HTTP/1.1 (nginx spreads them over the instances), one
 * over HTTP/2 when `https` is given, one gRPC stream and one socket.io client, each
 * resuming from the last seq it saw after any failure (Last-Event-ID, `afterSeq`).
 */
export function followOrder(
  endpoints: StackEndpoints,
  orderId: string,
  sseClients = 4,
): ResumingClients {
  const seen = new Map<string, number[]>();
  const done = new Set<string>();
  /** Each client's last failure, so a timed-out wait says who failed and how. */
  const failures = new Map<string, string>();
  const cleanups: (() => void)[] = [];
  let stopped = false;
  const track = (name: string) => {
    const seqs: number[] = [];
    seen.set(name, seqs);
    return seqs;
  };

  const h2 = new Agent({ allowH2: true, connect: { ca: endpoints.ca, servername: 'localhost' } });
  cleanups.push(() => void h2.close());
  const sse = (name: string, base: string, dispatcher?: Agent) => {
    const seqs = track(name);
    // The bearer goes on every (re)connect: Node's fetch can set headers, a browser's
    // EventSource cannot.
    const es = new EventSource(`${base}/v1/orders/${orderId}/stream`, {
      fetch: (input, init) =>
        undiciFetch(input, {
          ...init,
          headers: {
            ...(init.headers as Record<string, string>),
            authorization: `Bearer ${endpoints.token}`,
          },
          ...(dispatcher && { dispatcher }),
        }),
    });
    for (const kind of ['status', 'tracking']) {
      es.addEventListener(kind, (m) => seqs.push(Number(JSON.parse(m.data as string).seq)));
    }
    es.addEventListener('end', () => {
      done.add(name);
      es.close();
    });
    es.addEventListener('error', (e) => {
      const closed = es.readyState === EventSource.CLOSED ? ' (gave up)' : '';
      failures.set(name, `${e.code ?? ''} ${e.message ?? 'error'}${closed}`.trim());
    });
    cleanups.push(() => es.close());
  };
  for (let i = 0; i < sseClients; i++) sse(`sse-http1-${i}`, endpoints.http);
  if (endpoints.https !== undefined) sse('sse-http2', endpoints.https, h2);

  const pkg = loadPackageDefinition(loadSync(ORDER_STATUS_PROTO_PATH, PROTO_LOADER_OPTIONS)) as {
    orderstatus: { v1: { OrderStatusService: ServiceClientConstructor } };
  };
  const grpcSeen = track('grpc');
  const client = new pkg.orderstatus.v1.OrderStatusService(
    endpoints.grpc,
    credentials.createSsl(Buffer.from(endpoints.ca)),
    // The certificate names localhost; TLS's server name may not be an IP (RFC 6066, 3).
    {
      interceptors: [bearerInterceptor(endpoints.token)],
      'grpc.ssl_target_name_override': 'localhost',
    },
  ) as unknown as OrderStatusClient;
  cleanups.push(() => client.close());
  let retry: NodeJS.Timeout | undefined;
  cleanups.push(() => clearTimeout(retry));
  const follow = () => {
    if (stopped) return;
    const call = client.subscribe({ orderId, afterSeq: grpcSeen.at(-1) ?? 0 });
    call.on('data', (m: ProtoSubscribeResponse) => {
      if ('event' in m && m.event) grpcSeen.push(Number(m.event.seq));
      else if ('tracking' in m && m.tracking) grpcSeen.push(Number(m.tracking.seq));
    });
    call.on('error', () => undefined);
    call.on('status', (s) => {
      if (s.code === GrpcCode.OK) done.add('grpc');
      else if (!stopped) {
        failures.set('grpc', `${GrpcCode[s.code]}: ${s.details}`);
        retry = setTimeout(follow, RECONNECT_DELAY_MS);
      }
    });
    cleanups.push(() => call.cancel());
  };
  follow();

  // socket.io with reconnection on: every (re)connect subscribes from the last seq.
  const wsSeen = track('socket.io');
  const socket = io(`${endpoints.http}${ORDERS_NAMESPACE}`, {
    transports: ['websocket'],
    auth: { token: endpoints.token },
    reconnectionDelay: RECONNECT_DELAY_MS,
    reconnectionDelayMax: 5 * RECONNECT_DELAY_MS,
  });
  cleanups.push(() => socket.close());
  socket.on('connect_error', (e) => failures.set('socket.io', `connect_error: ${e.message}`));
  socket.on('connect', () => {
    socket.emit('subscribe', { orderId, afterSeq: wsSeen.at(-1) ?? 0 }, () => undefined);
  });
  socket.on('status', (e: OrderEvent) => wsSeen.push(e.seq));
  socket.on('tracking', (e: OrderEvent) => wsSeen.push(e.seq));
  socket.on('end', (e: { reason: string }) => {
    if (e.reason === 'completed') done.add('socket.io');
  });

  return {
    seen,
    allSaw: (count) => [...seen.values()].every((s) => s.length >= count),
    allDone: () => [...seen.keys()].every((name) => done.has(name)),
    describe: () =>
      [...seen]
        .map(([name, seqs]) => {
          const failure = failures.get(name);
          return `${name}: [${seqs.join(',')}]${done.has(name) ? ' done' : ''}${failure ? `, last failure ${failure}` : ''}`;
        })
        .join('\n'),
    close: () => {
      stopped = true;
      for (const c of cleanups.splice(0)) c();
    },
  };
}
