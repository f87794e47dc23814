import { SteadyPacer } from './steady-pacer';

/**
 * The bare server's whole domain: per-order event logs with a small replay window, the
 * live listeners of each order, and a paced simulator. Plain Maps and callbacks, no
 * framework and no RxJS, so the overhead scenario measures what Nest adds on top.
 */
export interface BareStatusEvent {
  readonly orderId: string;
  readonly seq: number;
  readonly status: string;
  readonly previousStatus?: string;
  readonly publishedAtUs: number;
}

export interface BareTrackingEvent {
  readonly orderId: string;
  readonly seq: number;
  readonly status: string;
  readonly publishedAtUs: number;
  readonly location: { readonly lat: number; readonly lon: number };
  readonly etaMs: number;
}

/** Both order event kinds, with the same fields in the same order as the service writes them. */
export type BareOrderEvent = BareStatusEvent | BareTrackingEvent;

/** The payload domain's event (libs/payload-domain), its fields in the service's order. */
export interface BarePayloadEvent {
  readonly orderId: string;
  readonly seq: number;
  readonly publishedAtUs: number;
  readonly payload: string;
}

/** An event of either domain the service carries (STREAM_DOMAIN). */
export type BareEvent = BareOrderEvent | BarePayloadEvent;

export function isPayload(e: BareEvent): e is BarePayloadEvent {
  return (e as Partial<BarePayloadEvent>).payload !== undefined;
}

export function isTracking(e: BareEvent): e is BareTrackingEvent {
  return (e as Partial<BareTrackingEvent>).location !== undefined;
}

/** A steady schedule's events: order events, or the payload domain's of `bytes` each. */
export type BareSchedule =
  { readonly domain: 'order' } | { readonly domain: 'payload'; readonly bytes: number };

export const RING_SIZE = 256;

const DEPOT = { lat: 52.52, lon: 13.405 };
const round5 = (x: number): number => Math.round(x * 1e5) / 1e5;

/**
 * The `step`-th tracking update of a steady schedule: the same values as the service's
 * simulator (`steadyTracking` in apps/order-status/src/simulator/simulator-plan.ts; a spec keeps the
 * two equal), so both servers put the same bytes on the wire.
 */
export function bareSteadyTracking(
  step: number,
  nowMs: number,
): { location: { lat: number; lon: number }; etaMs: number } {
  const k = step % 1000;
  return {
    location: { lat: round5(DEPOT.lat + k * 1e-4), lon: round5(DEPOT.lon + k * 1e-4) },
    etaMs: nowMs + 600_000,
  };
}

type Listener = (e: BareEvent) => void;

interface Order {
  readonly events: BareEvent[];
  lastSeq: number;
  readonly listeners: Set<Listener>;
}

export class OrderLog {
  private readonly orders = new Map<string, Order>();
  private pacer?: SteadyPacer;
  published = 0;
  state: 'idle' | 'ready' | 'running' | 'stopped' = 'idle';
  private schedule = {
    ids: [] as string[],
    ratePerOrder: 0,
    domain: 'order' as BareSchedule['domain'],
    filler: '',
  };

  private nowUs(): number {
    return Math.round((performance.timeOrigin + performance.now()) * 1000);
  }

  get(orderId: string): Order | undefined {
    return this.orders.get(orderId);
  }

  /** A status change (the service's field order: previousStatus before publishedAtUs). */
  publish(orderId: string, status: string): BareEvent {
    const order = this.orderOf(orderId);
    const previous = statusOf(order.events[order.events.length - 1]);
    return this.append(order, {
      orderId,
      seq: order.lastSeq + 1,
      status,
      ...(previous !== undefined ? { previousStatus: previous } : {}),
      publishedAtUs: this.nowUs(),
    });
  }

  /** A payload event, as the service's payload domain makes it. */
  payload(orderId: string): BareEvent {
    const order = this.orderOf(orderId);
    return this.append(order, {
      orderId,
      seq: order.lastSeq + 1,
      publishedAtUs: this.nowUs(),
      payload: this.schedule.filler,
    });
  }

  /** A tracking update of a shipped order, as the service's steady schedule makes it. */
  track(orderId: string, step: number, nowMs: number): BareEvent {
    const order = this.orderOf(orderId);
    return this.append(order, {
      orderId,
      seq: order.lastSeq + 1,
      status: statusOf(order.events[order.events.length - 1]) ?? 'shipped',
      publishedAtUs: this.nowUs(),
      ...bareSteadyTracking(step, nowMs),
    });
  }

  private orderOf(orderId: string): Order {
    let order = this.orders.get(orderId);
    if (!order) {
      order = { events: [], lastSeq: 0, listeners: new Set() };
      this.orders.set(orderId, order);
    }
    return order;
  }

  private append(order: Order, e: BareEvent): BareEvent {
    order.lastSeq = e.seq;
    order.events.push(e);
    if (order.events.length > RING_SIZE) order.events.shift();
    this.published += 1;
    for (const l of order.listeners) l(e);
    return e;
  }

  /** Retained events after `afterSeq` (the bare server does not do resets: all fit). */
  after(orderId: string, afterSeq: number): BareEvent[] {
    return this.orders.get(orderId)?.events.filter((e) => e.seq > afterSeq) ?? [];
  }

  listen(orderId: string, l: Listener): () => void {
    const order = this.orders.get(orderId);
    order?.listeners.add(l);
    return () => order?.listeners.delete(l);
  }

  prepare(orders: number, ratePerOrder: number, events: BareSchedule, prefix: string): void {
    this.stop();
    this.schedule = {
      ids: Array.from({ length: orders }, (_, i) => `${prefix}-${i + 1}`),
      ratePerOrder,
      domain: events.domain,
      filler: events.domain === 'payload' ? 'x'.repeat(events.bytes) : '',
    };
    // As the service's steady schedules: a payload stream starts with its first payload;
    // an order is created and shipped now, its tracking updates come later.
    for (const id of this.schedule.ids) {
      if (events.domain === 'payload') {
        this.payload(id);
        continue;
      }
      this.publish(id, 'created');
      this.publish(id, 'shipped');
    }
    this.state = 'ready';
  }

  /** Publishes tracking updates on the service simulator's steady schedule (steady-pacer.ts). */
  start(): void {
    if (this.state !== 'ready') return;
    this.state = 'running';
    const ids = this.schedule.ids;
    const payloads = this.schedule.domain === 'payload';
    this.pacer = new SteadyPacer(ids.length, this.schedule.ratePerOrder, (order, step) =>
      payloads ? this.payload(ids[order]) : this.track(ids[order], step, Date.now()),
    );
    this.pacer.start();
  }

  stop(): void {
    this.pacer?.stop();
    this.pacer = undefined;
    if (this.state === 'running') this.state = 'stopped';
  }
}

/** An order event's status; undefined for a payload event (or none). */
export function statusOf(e: BareEvent | undefined): string | undefined {
  return e === undefined || isPayload(e) ? undefined : e.status;
}
