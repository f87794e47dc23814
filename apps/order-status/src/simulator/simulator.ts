import {
  isTerminalStatus,
  OrderStatus,
  publishStatus,
  publishStatusSync,
  publishTracking,
  publishTrackingSync,
  type OrderEvent,
  type OrderSnapshot,
  type PublishCommand,
  type Tracking,
  type TrackingCommand,
} from '@app/order-domain';
import type { StreamStore } from '@app/store';
import type { OrderTracing } from '../tracing/order-tracing';
import { MAX_IN_FLIGHT, SimulatorClock, type SimulatorState } from './simulator-clock';
import {
  cancellationOf,
  dwellMs,
  lifecycleNext,
  routeOf,
  steadyTracking,
  trackingOnRoute,
  type Route,
} from './simulator-plan';

/** A schedule for the simulator: which orders, how fast, how big, for how long. */
export interface SimulatorSchedule {
  /** Orders moving at once. */
  readonly orders: number;
  /**
   * Tracking updates per second per order. With `lifecycle: false` this is the exact
   * steady rate of every order (what load tests measure); with `lifecycle: true` it is
   * the rate while an order is shipped or out for delivery (status changes come after
   * each status's dwell time).
   */
  readonly ratePerOrder: number;
  /**
   * true: a believable life cycle per order: `created`, `paid`, `packed`, `shipped`,
   * `out_for_delivery`, `delivered`, each status held for its own dwell time, tracking
   * updates while shipped and out for delivery, every tenth order cancelled on the way
   * (with a reason); finished orders are replaced by new ones. false: `prepare()` creates
   * every order and ships it, and the run publishes tracking updates only, at exactly
   * `ratePerOrder`, so a load test gets a steady rate and can follow one order for as
   * long as it likes. @default true
   */
  readonly lifecycle?: boolean;
  /**
   * Life cycle: the first N orders (`${prefix}-1` ...) never finish: out for delivery, each
   * new ETA starts another round instead of `delivered`, so documented examples can follow
   * them at any time while the others are replaced by new ids. @default 0
   */
  readonly longLivedOrders?: number;
  /**
   * Life cycle: dwell times are divided by this (2: twice as fast), so a test sees orders
   * finish and be replaced in seconds. Tracking stays at `ratePerOrder`. @default 1
   */
  readonly speed?: number;
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

export { SIMULATOR_TICK_MS, type SimulatorState } from './simulator-clock';

export interface SimulatorStatus {
  readonly state: SimulatorState;
  readonly schedule?: SimulatorSchedule;
  readonly published: number;
  readonly failed: number;
  readonly activeOrderIds: readonly string[];
  readonly startedAtUs?: number;
}

interface SimOrder {
  readonly id: string;
  readonly n: number;
  readonly ownerId: string;
  status: OrderStatus;
  /** Tracking updates published so far (the steady schedule's step). */
  steps: number;
  /** Life cycle: epoch ms of the next status change, and of the next tracking update. */
  statusDueMs: number;
  trackingDueMs: number;
  /** Life cycle: from the depot to the customer, set when the order ships. */
  route?: Route;
}

/** @default 10 customers own the simulated orders (`customer-0` .. `customer-9`) */
export const DEFAULT_SIMULATOR_CUSTOMERS = 10;

/** The owner of simulated order number `n`. */
export function simulatedOwner(n: number, customers: number): string {
  return `customer-${n % customers}`;
}

/** A dwell time at the schedule's speed, in whole ms (an ETA is an integer epoch ms). */
function scaledDwellMs(status: OrderStatus, s: Required<SimulatorSchedule>): number {
  return Math.round(dwellMs(status) / s.speed);
}

/**
 * The embedded event source. Two kinds of schedule:
 * - steady (`lifecycle: false`): N shipped orders publish tracking updates at an exact
 *   aggregate rate (orders x ratePerOrder), spread round-robin over ticks so each order
 *   sees evenly spaced events. `prepare()` creates (and ships) the orders without
 *   starting the clock, so a load test can subscribe first and then `start()`.
 * - life cycle (`lifecycle: true`, the demo): each order moves through its statuses after
 *   per-status dwell times (simulator-plan.ts), some are cancelled with a reason, and
 *   shipped orders report their position and ETA at `ratePerOrder`.
 * Every status change is a real change; progress is a tracking update.
 */
export class OrderSimulator extends SimulatorClock {
  private schedule?: Required<SimulatorSchedule>;
  private orders: SimOrder[] = [];
  private nextOrderNumber = 1;
  private cursor = 0;
  /** The store's synchronous publishes, made once: no closure per event. */
  private readonly statusSync = (cmd: PublishCommand): OrderEvent =>
    publishStatusSync(this.store, cmd);
  private readonly trackingSync = (cmd: TrackingCommand): OrderEvent =>
    publishTrackingSync(this.store, cmd);

  constructor(
    private readonly store: StreamStore<OrderEvent, OrderSnapshot>,
    /** With tracing on: each synchronous publish is a root `publish` span (sampled). */
    tracing?: OrderTracing,
  ) {
    super(tracing);
  }

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
      lifecycle: true,
      prefix: 'order',
      durationMs: 0,
      longLivedOrders: 0,
      speed: 1,
      ...schedule,
      customers: schedule.customers ?? DEFAULT_SIMULATOR_CUSTOMERS,
    };
    if (!Number.isInteger(s.customers) || s.customers < 1) {
      throw new TypeError('customers must be an integer >= 1');
    }
    if (!Number.isInteger(s.longLivedOrders) || s.longLivedOrders < 0) {
      throw new TypeError('longLivedOrders must be an integer >= 0');
    }
    if (!Number.isFinite(s.speed) || s.speed <= 0) {
      throw new TypeError('speed must be a number > 0');
    }
    this.schedule = s;
    this.published = 0;
    this.failed = 0;
    this.nextOrderNumber = 1;
    this.orders = [];
    for (let i = 0; i < s.orders; i++) this.orders.push(this.newOrder(s));
    await Promise.all(this.orders.map((o) => this.create(o, s)));
    this.state = 'ready';
    return this.status();
  }

  /** Starts the clock for a prepared schedule. */
  start(): SimulatorStatus {
    const s = this.schedule;
    if (!s || !this.startClock(s.durationMs)) return this.status();
    this.cursor = 0;
    if (s.lifecycle) for (const o of this.orders) this.plan(o, s, Date.now());
    return this.status();
  }

  stop(): SimulatorStatus {
    this.stopClock();
    return this.status();
  }

  protected tick(elapsedMs: number): void {
    const s = this.schedule;
    if (!s) return;
    if (s.lifecycle) this.tickLifecycle(s);
    else this.tickSteady(s, elapsedMs);
  }

  private tickSteady(s: Required<SimulatorSchedule>, elapsedMs: number): void {
    const n = this.dueNow(elapsedMs, s.ratePerOrder, s.orders);
    const nowMs = Date.now();
    for (let i = 0; i < n; i++) {
      const order = this.orders[this.cursor];
      this.cursor = (this.cursor + 1) % this.orders.length;
      this.track(order, steadyTracking(order.steps++, nowMs));
    }
  }

  /**
   * Life cycle: every order whose next status change or tracking update is due. O(orders)
   * per tick, which the demo's order counts (tens to thousands) afford; steady load tests
   * with many orders use the round-robin above.
   */
  private tickLifecycle(s: Required<SimulatorSchedule>): void {
    const nowMs = Date.now();
    // By index: a finished order is replaced in place, and its replacement waits for
    // its `created` before it is planned (its due times are infinite until then).
    for (let i = 0; i < this.orders.length; i++) {
      if (this.inFlight >= MAX_IN_FLIGHT) return;
      const order = this.orders[i];
      if (nowMs >= order.statusDueMs) this.advance(order, s, nowMs);
      else if (nowMs >= order.trackingDueMs && order.route !== undefined) {
        this.track(order, trackingOnRoute(order.route, nowMs));
        order.trackingDueMs += 1000 / s.ratePerOrder;
      }
    }
  }

  /** The order's next status change (or its cancellation), then its next plan. */
  private advance(order: SimOrder, s: Required<SimulatorSchedule>, nowMs: number): void {
    const longLived = order.n <= s.longLivedOrders;
    const cancel = longLived ? undefined : cancellationOf(order.n);
    const next =
      cancel !== undefined && cancel.at === order.status
        ? OrderStatus.Cancelled
        : lifecycleNext(order.status);
    if (next === undefined) return;
    if (longLived && isTerminalStatus(next)) {
      this.newRound(order, s, nowMs);
      return;
    }
    order.status = next;
    this.publish(order, next, cancel && next === OrderStatus.Cancelled ? cancel.reason : undefined);
    if (isTerminalStatus(next)) {
      // Replace the finished order so the number of moving orders stays constant.
      const replacement = this.newOrder(s);
      this.orders[this.orders.indexOf(order)] = replacement;
      void this.create(replacement, s).then(() => this.plan(replacement, s, Date.now()));
      return;
    }
    this.plan(order, s, nowMs);
  }

  /** Sets when the order next changes status and, once shipped, its route and tracking. */
  private plan(order: SimOrder, s: Required<SimulatorSchedule>, nowMs: number): void {
    // Out for delivery, it arrives at the ETA its tracking updates announced.
    order.statusDueMs =
      order.status === OrderStatus.OutForDelivery && order.route !== undefined
        ? order.route.etaMs
        : nowMs + scaledDwellMs(order.status, s);
    if (order.status === OrderStatus.Shipped) {
      // The ETA is when it will be delivered: both transit dwell times from now.
      const etaMs = order.statusDueMs + scaledDwellMs(OrderStatus.OutForDelivery, s);
      order.route = routeOf(order.n, nowMs, etaMs);
    }
    order.trackingDueMs =
      order.route !== undefined && s.ratePerOrder > 0
        ? nowMs + 1000 / s.ratePerOrder
        : Number.POSITIVE_INFINITY;
  }

  /** A long-lived order out for delivery starts another round to its customer. */
  private newRound(order: SimOrder, s: Required<SimulatorSchedule>, nowMs: number): void {
    const etaMs = nowMs + scaledDwellMs(OrderStatus.OutForDelivery, s);
    order.route = routeOf(order.n, nowMs, etaMs);
    order.statusDueMs = etaMs;
  }

  private newOrder(s: Required<SimulatorSchedule>): SimOrder {
    const n = this.nextOrderNumber++;
    return {
      id: `${s.prefix}-${n}`,
      n,
      ownerId: simulatedOwner(n, s.customers),
      status: OrderStatus.Created,
      steps: 0,
      statusDueMs: Number.POSITIVE_INFINITY,
      trackingDueMs: Number.POSITIVE_INFINITY,
    };
  }

  /**
   * Creates an order (a steady schedule also ships it, so its run is tracking updates
   * only), or adopts the state an earlier run left it in.
   */
  private async create(order: SimOrder, s: Required<SimulatorSchedule>): Promise<void> {
    if (!(await this.publishAsync(order, OrderStatus.Created, order.ownerId))) {
      const snap = await this.store.getSnapshot(order.id).catch(() => undefined);
      if (snap && !isTerminalStatus(snap.status)) order.status = snap.status;
    }
    if (s.lifecycle || order.status === OrderStatus.OutForDelivery) return;
    if (order.status !== OrderStatus.Shipped) {
      await this.publishAsync(order, OrderStatus.Shipped);
      order.status = OrderStatus.Shipped;
    }
  }

  /** A status change, synchronously when the store can (no promise per event). */
  private publish(order: SimOrder, status: OrderStatus, reason?: string): void {
    if (this.store.appendSync === undefined) {
      void this.publishAsync(order, status, undefined, reason);
      return;
    }
    const cmd: PublishCommand = {
      orderId: order.id,
      status,
      ...(reason !== undefined ? { reason } : {}),
    };
    this.publishSync('status', cmd, this.statusSync);
  }

  private async publishAsync(
    order: SimOrder,
    status: OrderStatus,
    ownerId?: string,
    reason?: string,
  ): Promise<boolean> {
    return this.counted(() =>
      publishStatus(this.store, {
        orderId: order.id,
        status,
        ...(ownerId !== undefined ? { ownerId } : {}),
        ...(reason !== undefined ? { reason } : {}),
      }),
    );
  }

  /** A tracking update, synchronously when the store can. */
  private track(order: SimOrder, tracking: Tracking): void {
    // A literal, not a spread of `tracking`: on Node 20 a spread followed by another
    // property takes V8's slow runtime path (see snapshotAfter).
    const cmd: TrackingCommand = {
      orderId: order.id,
      location: tracking.location,
      etaMs: tracking.etaMs,
    };
    if (this.store.appendSync === undefined) {
      void this.counted(() => publishTracking(this.store, cmd));
      return;
    }
    this.publishSync('tracking', cmd, this.trackingSync);
  }
}
