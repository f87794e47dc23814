import { Metadata, type StatusObject } from '@grpc/grpc-js';
import { request } from 'undici';
import { ErrorCode, type ErrorBody } from '@app/contracts';
import {
  collect,
  orderStatusClient,
  seqsOf,
  type OrderStatusClient,
} from '../grpc/grpc-test-client';
import { openSseH1 } from '../support/sse-stream';
import type { TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { ClientPool, type RecordingClient } from '../ws/orders-client';

/** Every way a client can ask for an order's events (or publish), one attempt each. */

/** What a `publish` attempt sends: a tracking update (orders under test are shipped). */
const TRACKING = { location: { lat: 50, lon: 8 }, etaMs: 1_900_000_000_000 };

export const TRANSPORTS = [
  'sse',
  'long-poll',
  'snapshot',
  'publish',
  'grpc-subscribe',
  'grpc-get',
  'grpc-publish',
  'ws-websocket',
  'ws-polling',
] as const;
export type AttemptTransport = (typeof TRANSPORTS)[number];

/** What one attempt got: the error code (or 'ok') and how many events reached it. */
export interface Outcome {
  readonly code: ErrorCode | 'ok';
  /** The transport's own status: HTTP status, gRPC code, or the socket.io error code. */
  readonly status: number | string;
  readonly events: number;
}

const GRPC_TO_CODE: Record<number, ErrorCode | 'ok'> = {
  0: 'ok',
  // CANCELLED: the stream was open and the attempt cancelled it after its look.
  1: 'ok',
  3: ErrorCode.InvalidArgument,
  5: ErrorCode.NotFound,
  7: ErrorCode.PermissionDenied,
  8: ErrorCode.ResourceExhausted,
  16: ErrorCode.Unauthenticated,
};

/**
 * Runs attempts against one test app with arbitrary tokens (`undefined`: none). Streams
 * that open are closed at once after a short look; what matters is the code and that no
 * event arrived.
 */
export class Attempts {
  private readonly pool = new ClientPool();
  private readonly grpc: OrderStatusClient;

  constructor(private readonly app: TestApp) {
    this.grpc = orderStatusClient(app.grpcAddress, {}, null);
  }

  /** A unary call with explicit metadata (the client's own interceptor is off: token null). */
  private unary(method: 'getOrder' | 'updateTracking', req: object, md: Metadata): Promise<void> {
    const fn = (this.grpc as unknown as Record<string, UnaryFn>)[method].bind(this.grpc);
    return new Promise((resolve, reject) =>
      fn(req, md, { deadline: Date.now() + 5_000 }, (err) => (err ? reject(err) : resolve())),
    );
  }

  async close(): Promise<void> {
    this.grpc.close();
    await this.pool.closeAll();
  }

  async run(
    transport: AttemptTransport,
    orderId: string,
    token: string | undefined,
    afterSeq = 0,
  ): Promise<Outcome> {
    const auth: Record<string, string> = {
      authorization: token === undefined ? '' : `Bearer ${token}`,
    };
    switch (transport) {
      case 'sse': {
        const s = await openSseH1(
          `${this.app.httpUrl}/v1/orders/${orderId}/stream?after=${afterSeq}`,
          auth,
        );
        if (s.status !== 200) {
          await s.ended;
          return httpOutcome(s.status, s.body(), s.events().length);
        }
        await new Promise((r) => setTimeout(r, 50));
        s.close();
        return { code: 'ok', status: 200, events: s.events().length };
      }
      case 'long-poll':
      case 'snapshot':
      case 'publish': {
        const path =
          transport === 'long-poll'
            ? `/v1/orders/${orderId}/events?after=${afterSeq}&wait=0`
            : transport === 'snapshot'
              ? `/v1/orders/${orderId}`
              : `/v1/orders/${orderId}/tracking`;
        const headers: Record<string, string> =
          token === undefined ? {} : { authorization: auth.authorization };
        const res = await request(`${this.app.httpUrl}${path}`, {
          method: transport === 'publish' ? 'POST' : 'GET',
          headers:
            transport === 'publish' ? { ...headers, 'content-type': 'application/json' } : headers,
          // A tracking update: a publish that may be repeated (the order must be shipped).
          ...(transport === 'publish' ? { body: JSON.stringify(TRACKING) } : {}),
        });
        const text = await res.body.text();
        const events =
          transport === 'long-poll' && res.statusCode === 200
            ? (JSON.parse(text) as { events: unknown[] }).events.length
            : 0;
        return httpOutcome(res.statusCode, text, events);
      }
      case 'grpc-subscribe': {
        const md = new Metadata();
        if (token !== undefined) md.set('authorization', `Bearer ${token}`);
        const subscribe = this.grpc.subscribe.bind(this.grpc) as unknown as (
          req: object,
          md: Metadata,
        ) => ReturnType<OrderStatusClient['subscribe']>;
        const before = this.app.bus.subscriberCount();
        const call = subscribe({ orderId, afterSeq }, md);
        const c = collect(call, 10_000);
        // A refused stream ends with its status; an accepted one sends nothing until an
        // event, so "open" is read from the service's bus gaining the subscription. Not a
        // fixed give-up timer: on a busy host a refusal can take longer than any guess,
        // and cancelling first would read it as CANCELLED, an open stream.
        let ended = false;
        void c.status.finally(() => (ended = true)).catch(() => undefined);
        await waitFor(() => ended || this.app.bus.subscriberCount() > before, 'an answer', 10_000);
        if (!ended) {
          await new Promise((r) => setTimeout(r, 50));
          call.cancel();
        }
        const status: StatusObject = await c.status;
        const code = GRPC_TO_CODE[status.code] ?? ErrorCode.Internal;
        return { code, status: status.code, events: seqsOf(c.items).length };
      }
      case 'grpc-get':
      case 'grpc-publish': {
        const md = new Metadata();
        if (token !== undefined) md.set('authorization', `Bearer ${token}`);
        try {
          if (transport === 'grpc-get') await this.unary('getOrder', { orderId }, md);
          else await this.unary('updateTracking', { orderId, ...TRACKING }, md);
          return { code: 'ok', status: 0, events: 0 };
        } catch (err) {
          const code = (err as { code: number }).code;
          return { code: GRPC_TO_CODE[code] ?? ErrorCode.Internal, status: code, events: 0 };
        }
      }
      case 'ws-websocket':
      case 'ws-polling': {
        let client: RecordingClient;
        try {
          client = await this.pool.connect(this.app.httpUrl, {
            transport: transport === 'ws-websocket' ? 'websocket' : 'polling',
            token: token ?? null,
          });
        } catch (err) {
          const data = (err as { data?: { code: ErrorCode } }).data;
          return {
            code: data?.code ?? ErrorCode.Internal,
            status: data?.code ?? 'none',
            events: 0,
          };
        }
        const ack = await client.subscribe(orderId, afterSeq);
        if (ack.ok) {
          await new Promise((r) => setTimeout(r, 50));
          return { code: 'ok', status: 'ok', events: client.statuses(orderId).length };
        }
        return {
          code: ack.error.code,
          status: ack.error.code,
          events: client.statuses(orderId).length,
        };
      }
    }
  }
}

type UnaryFn = (req: unknown, md: Metadata, opts: object, cb: (err: Error | null) => void) => void;

function httpOutcome(status: number, body: string, events: number): Outcome {
  if (status === 200 || status === 201 || status === 204) return { code: 'ok', status, events };
  let code: ErrorCode | 'ok' = ErrorCode.Internal;
  try {
    code = (JSON.parse(body) as ErrorBody).error.code;
  } catch {
    // Not our error body: leave it as internal, which fails the assertion visibly.
  }
  return { code, status, events };
}

/** Waits until the app holds no subscription at all (nothing leaked by a refused attempt). */
export async function noSubscriptions(app: TestApp): Promise<void> {
  await waitFor(() => app.bus.subscriberCount() === 0, 'no bus subscription left');
}
