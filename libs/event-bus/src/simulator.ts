import {
  isTerminalStatus,
  OrderStatus,
  ORDER_STATUS_SEQUENCE,
  type OrderStatusChanged,
} from '@app/contracts';
import type { OrderStore } from './order-store';

/** A schedule for the simulator: which orders, how fast, how big, for how long. */
export interface SimulatorSchedule {
  /** Orders moving at once. */
  readonly orders: number;
  /** Events per second per order. */
  readonly ratePerOrder: number;
  /** Filler bytes per event. @default 0 */
  readonly paddingBytes?: number;
  /**
   * true: orders run their life cycle to `delivered` (every tenth is cancelled instead)
   * and are replaced by new orders. false: orders stop at `out_for_delivery` and keep
   * publishing tracking updates there, so a load test can follow one order for as long
   * as it likes. @default true
   */
  readonly lifecycle?: boolean;
  /** Events per status before an order moves on (lifecycle mode). @default 3 */
  readonly eventsPerStatus?: number;
  /** Order ids are `${prefix}-${n}`, n from 1. @default 'order' */
  readonly prefix?: string;
  /** Stop after this many ms of running (0: until stopped). @default 0 */
  readonly durationMs?: number;
  /**
   * Order n belongs to `customer-<n % customers>`, so a customer's token sees a handful
   * of the simulated orders and no others. @default 10
   */
  readonly customers?: number;
}

export type SimulatorState = 'idle' | 'ready' | 'running' | 'stopped';

export interface SimulatorStatus {
  readonly state: SimulatorState;
  readonly schedule?: SimulatorSchedule;
  readonly published: number;
  readonly failed: number;
  readonly activeOrderIds: readonly string[];
  readonly startedAtUs?: number;
}

interface SimOrder {
  id: string;
  ownerId: string;
  status: OrderStatus;
  eventsInStatus: number;
  cancelAt?: OrderStatus;
}

/** @default 10 customers own the simulated orders (`customer-0` .. `customer-9`) */
export const DEFAULT_SIMULATOR_CUSTOMERS = 10;

/** The owner of simulated order number `n`. */
export function simulatedOwner(n: number, customers: number): string {
  return `customer-${n % customers}`;
}

/** @default 10 ms between ticks: events are spread evenly, not sent in bursts */
export const SIMULATOR_TICK_MS = 10;

/**
 * The embedded event source: publishes status changes for N orders through the store at
 * an exact aggregate rate (orders x ratePerOrder), spread round-robin over ticks so each
 * order sees evenly spaced events. `prepare()` creates the orders (their `created`
 * event) without starting the clock, so a load test can subscribe first and then
 * `start()` an exact schedule.
 */
export class OrderSimulator {
  private schedule?: Required<SimulatorSchedule>;
  private orders: SimOrder[] = [];
  private state: SimulatorState = 'idle';
  private timer?: NodeJS.Timeout;
  private startedAtMs = 0;
  private due = 0;
  private published = 0;
  private failed = 0;
  private nextOrderNumber = 1;
  private cursor = 0;
  private inFlight = 0;

  constructor(private readonly store: OrderStore) {}

  status(): SimulatorStatus {
    return {
      state: this.state,
      schedule: this.schedule,
      published: this.published,
      failed: this.failed,
      activeOrderIds: this.orders.map((o) => o.id),
      ...(this.state === 'running' ? { startedAtUs: Math.round(this.startedAtMs * 1000) } : {}),
    };
  }

  /** Stops any current run and creates the schedule's orders. */
  async prepare(schedule: SimulatorSchedule): Promise<SimulatorStatus> {
    this.stop();
    const s: Required<SimulatorSchedule> = {
      paddingBytes: 0,
      lifecycle: true,
      eventsPerStatus: 3,
      prefix: 'order',
      durationMs: 0,
      ...schedule,
      customers: schedule.customers ?? DEFAULT_SIMULATOR_CUSTOMERS,
    };
    if (!Number.isInteger(s.customers) || s.customers < 1) {
      throw new TypeError('customers must be an integer >= 1');
    }
    this.schedule = s;
    this.published = 0;
    this.failed = 0;
    this.nextOrderNumber = 1;
    this.orders = [];
    for (let i = 0; i < s.orders; i++) this.orders.push(this.newOrder(s));
    await Promise.all(this.orders.map((o) => this.create(o)));
    this.state = 'ready';
    return this.status();
  }

  /** Starts the clock for a prepared schedule. */
  start(): SimulatorStatus {
    if (this.state !== 'ready' || !this.schedule) return this.status();
    this.state = 'running';
    this.startedAtMs = performance.timeOrigin + performance.now();
    this.due = 0;
    this.cursor = 0;
    this.timer = setInterval(() => this.tick(), SIMULATOR_TICK_MS);
    return this.status();
  }

  stop(): SimulatorStatus {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.state === 'running' || this.state === 'ready') this.state = 'stopped';
    return this.status();
  }

  private tick(): void {
    const s = this.schedule;
    if (!s) return;
    const elapsedMs = performance.timeOrigin + performance.now() - this.startedAtMs;
    if (s.durationMs > 0 && elapsedMs >= s.durationMs) {
      this.stop();
      return;
    }
    // Events due so far at the aggregate rate; a late tick catches up rather than
    // silently lowering the rate (the load test compares delivered against expected).
    const target = Math.floor((elapsedMs / 1000) * s.ratePerOrder * s.orders);
    // Do not pile up publishes against a store that cannot keep up (e.g. Redis down).
    const budget = Math.max(0, 10_000 - this.inFlight);
    const n = Math.min(target - this.due, budget);
    for (let i = 0; i < n; i++) {
      const order = this.orders[this.cursor];
      this.cursor = (this.cursor + 1) % this.orders.length;
      this.advance(order, s);
    }
    this.due += n;
  }

  private advance(order: SimOrder, s: Required<SimulatorSchedule>): void {
    let next = order.status;
    if (order.eventsInStatus >= s.eventsPerStatus) {
      const i = ORDER_STATUS_SEQUENCE.indexOf(order.status);
      const forward = ORDER_STATUS_SEQUENCE[i + 1] ?? order.status;
      if (s.lifecycle) next = order.cancelAt === order.status ? OrderStatus.Cancelled : forward;
      else if (!isTerminalStatus(forward)) next = forward;
    }
    if (next !== order.status) {
      order.status = next;
      order.eventsInStatus = 0;
    }
    order.eventsInStatus++;
    if (this.store.publishSync) this.publishNow(order, next);
    else void this.publish(order, next);
    if (isTerminalStatus(next)) {
      // Replace the finished order so the number of moving orders stays constant.
      const idx = this.orders.indexOf(order);
      const replacement = this.newOrder(s);
      this.orders[idx] = replacement;
      void this.create(replacement);
    }
  }

  private newOrder(s: Required<SimulatorSchedule>): SimOrder {
    const n = this.nextOrderNumber++;
    return {
      id: `${s.prefix}-${n}`,
      ownerId: simulatedOwner(n, s.customers),
      status: OrderStatus.Created,
      eventsInStatus: 1,
      ...(s.lifecycle && n % 10 === 0 ? { cancelAt: OrderStatus.Packed } : {}),
    };
  }

  /** Creates an order, or adopts its state when an earlier run already created it. */
  private async create(order: SimOrder): Promise<void> {
    if (await this.publish(order, OrderStatus.Created, order.ownerId)) return;
    const snap = await this.store.getSnapshot(order.id).catch(() => undefined);
    if (snap && !isTerminalStatus(snap.status)) order.status = snap.status;
  }

  /** publish() without a promise, for a store with a synchronous path. */
  private publishNow(order: SimOrder, status: OrderStatus): void {
    try {
      this.store.publishSync?.({
        orderId: order.id,
        status,
        paddingBytes: this.schedule?.paddingBytes ?? 0,
      });
      this.published++;
    } catch {
      this.failed++;
    }
  }

  private async publish(
    order: SimOrder,
    status: OrderStatus,
    ownerId?: string,
  ): Promise<OrderStatusChanged | undefined> {
    this.inFlight++;
    try {
      const e = await this.store.publish({
        orderId: order.id,
        status,
        paddingBytes: this.schedule?.paddingBytes ?? 0,
        ...(ownerId !== undefined ? { ownerId } : {}),
      });
      this.published++;
      return e;
    } catch {
      // A store outage (or an order already finished by an outside publish) must not
      // stop the simulator; failures are counted and visible in its status.
      this.failed++;
      return undefined;
    } finally {
      this.inFlight--;
    }
  }
}
