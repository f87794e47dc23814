/**
 * The bare server's whole domain: per-order event logs with a small replay window, the
 * live listeners of each order, and a paced simulator. Plain Maps and callbacks, no
 * framework and no RxJS, so the overhead scenario measures what Nest adds on top.
 */
export interface BareEvent {
  readonly orderId: string;
  readonly seq: number;
  readonly status: string;
  readonly publishedAtUs: number;
  readonly padding?: string;
}

export const RING_SIZE = 256;
const STATUSES = ['paid', 'packed', 'shipped', 'out_for_delivery'] as const;

type Listener = (e: BareEvent) => void;

interface Order {
  readonly events: BareEvent[];
  lastSeq: number;
  readonly listeners: Set<Listener>;
}

export class OrderLog {
  private readonly orders = new Map<string, Order>();
  private timer?: NodeJS.Timeout;
  published = 0;
  state: 'idle' | 'ready' | 'running' | 'stopped' = 'idle';
  private schedule = { ids: [] as string[], ratePerOrder: 0, padding: '' };

  private nowUs(): number {
    return Math.round((performance.timeOrigin + performance.now()) * 1000);
  }

  get(orderId: string): Order | undefined {
    return this.orders.get(orderId);
  }

  publish(orderId: string, status: string): BareEvent {
    let order = this.orders.get(orderId);
    if (!order) {
      order = { events: [], lastSeq: 0, listeners: new Set() };
      this.orders.set(orderId, order);
    }
    order.lastSeq += 1;
    const e: BareEvent = {
      orderId,
      seq: order.lastSeq,
      status,
      publishedAtUs: this.nowUs(),
      ...(this.schedule.padding ? { padding: this.schedule.padding } : {}),
    };
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

  prepare(orders: number, ratePerOrder: number, paddingBytes: number, prefix: string): void {
    this.stop();
    this.schedule = {
      ids: Array.from({ length: orders }, (_, i) => `${prefix}-${i + 1}`),
      ratePerOrder,
      padding: 'x'.repeat(paddingBytes),
    };
    for (const id of this.schedule.ids) this.publish(id, 'created');
    this.state = 'ready';
  }

  /** Publishes on a 10 ms tick what is due per order since start (no drift, no burst catch-up limit). */
  start(): void {
    if (this.state !== 'ready') return;
    this.state = 'running';
    const t0 = performance.now();
    const done = new Map<string, number>();
    this.timer = setInterval(() => {
      const due = Math.floor(((performance.now() - t0) / 1000) * this.schedule.ratePerOrder);
      for (const id of this.schedule.ids) {
        for (let n = done.get(id) ?? 0; n < due; n += 1)
          this.publish(id, STATUSES[n % STATUSES.length]);
        done.set(id, due);
      }
    }, 10);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.state === 'running') this.state = 'stopped';
  }
}
