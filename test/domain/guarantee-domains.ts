import { request } from 'undici';
import type { DomainEvent, DomainSnapshot, StreamDomain } from '@app/contracts';
import { ORDER_DOMAIN, OrderStatus } from '@app/order-domain';
import { PAYLOAD_DOMAIN } from '@app/payload-domain';
import type { TransportName } from '@app/client/node';
import type { TestApp } from '../support/test-app';
import { testTracking } from '../support/test-app';

/**
 * One domain as the parameterised guarantee suite drives it: how to start the service
 * with it, the transports it is served on, and its REST publish calls. Everything else
 * the checks read from `domain`, the descriptor the service itself carries.
 */
export interface GuaranteeDomain {
  readonly name: string;
  /** The service's settings that select the domain (none: the default, orders). */
  readonly env: Readonly<Record<string, string>>;
  /** The descriptor the service carries, as the client's `WatchOptions.domain` takes it. */
  readonly domain: StreamDomain;
  readonly transports: readonly TransportName[];
  /**
   * Publishes the stream's next event over REST, creating the stream with the first,
   * never finishing it; `bytes` of filler where the event carries a load-test payload.
   */
  next(app: TestApp, streamId: string, bytes?: number): Promise<DomainEvent>;
  /**
   * Publishes about FILL_BYTES of events on an existing stream, never finishing it, and
   * returns the last seq: what fills a reader's buffers once it stops reading.
   */
  fill(app: TestApp, streamId: string): Promise<number>;
  /** Publishes an event that finishes the stream, for a domain that has one. */
  finish?(app: TestApp, streamId: string): Promise<DomainEvent>;
  /** The stream's snapshot as its REST read answers it (the store's, with the owner). */
  snapshot(app: TestApp, streamId: string): Promise<DomainSnapshot>;
}

async function post(app: TestApp, path: string, body: object): Promise<DomainEvent> {
  const res = await request(`${app.httpUrl}${path}`, {
    method: 'POST',
    headers: { ...app.authHeaders, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer: unknown = await res.body.json();
  if (res.statusCode !== 201) {
    throw new Error(`POST ${path}: ${res.statusCode} ${JSON.stringify(answer)}`);
  }
  return answer as DomainEvent;
}

async function get(app: TestApp, path: string): Promise<DomainSnapshot> {
  const res = await request(`${app.httpUrl}${path}`, { headers: app.authHeaders });
  const answer: unknown = await res.body.json();
  if (res.statusCode !== 200) {
    throw new Error(`GET ${path}: ${res.statusCode} ${JSON.stringify(answer)}`);
  }
  return answer as DomainSnapshot;
}

/** The statuses an order passes before tracking updates begin; then it is on the road. */
const TOWARD_SHIPPED = [
  OrderStatus.Created,
  OrderStatus.Paid,
  OrderStatus.Packed,
  OrderStatus.Shipped,
];

/** Bytes of events per `fill`: large enough that a few dozen fill a stopped reader's buffers. */
export const FILL_BYTES = 60_000;

/** Events published per order id, so `next` knows where its order is in the life cycle. */
const orderSteps = new Map<string, number>();

export const ORDER_GUARANTEES: GuaranteeDomain = {
  name: 'order',
  env: {},
  domain: ORDER_DOMAIN,
  transports: ['grpc', 'sse', 'ws', 'websocket', 'longpoll'],
  next: (app, orderId) => {
    const step = orderSteps.get(orderId) ?? 0;
    orderSteps.set(orderId, step + 1);
    const path = `/v1/orders/${orderId}`;
    // Status changes, then tracking updates: both of the domain's event kinds travel.
    return step < TOWARD_SHIPPED.length
      ? post(app, `${path}/status`, { status: TOWARD_SHIPPED[step] })
      : post(app, `${path}/tracking`, testTracking(step));
  },
  // An order event has no filler (sizes are the payload domain's): a fill is a few hundred
  // of them, published in process as the simulator does, which REST would take minutes for.
  fill: async (app, orderId) => {
    let last = 0;
    for (let bytes = 0; bytes < FILL_BYTES;) {
      const event = await app.progress(orderId);
      bytes += JSON.stringify(event).length;
      last = event.seq;
    }
    return last;
  },
  finish: (app, orderId) =>
    post(app, `/v1/orders/${orderId}/status`, { status: OrderStatus.Delivered }),
  snapshot: (app, orderId) => get(app, `/v1/orders/${orderId}`),
};

export const PAYLOAD_GUARANTEES: GuaranteeDomain = {
  name: 'payload',
  env: { STREAM_DOMAIN: 'payload' },
  domain: PAYLOAD_DOMAIN,
  transports: ['grpc', 'sse', 'ws', 'websocket', 'longpoll'],
  next: (app, streamId, bytes = 1) => post(app, `/v1/streams/${streamId}/payload`, { bytes }),
  snapshot: (app, streamId) => get(app, `/v1/streams/${streamId}`),
  fill: async (app, streamId) =>
    (await post(app, `/v1/streams/${streamId}/payload`, { bytes: FILL_BYTES })).seq,
};

export const GUARANTEE_DOMAINS: readonly GuaranteeDomain[] = [ORDER_GUARANTEES, PAYLOAD_GUARANTEES];
