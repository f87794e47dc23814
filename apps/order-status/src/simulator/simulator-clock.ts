import type { DomainEvent, TraceContext } from '@app/contracts';
import type { OrderTracing } from '../tracing/order-tracing';

/** Where a simulator is: prepared, publishing, or stopped. */
export type SimulatorState = 'idle' | 'ready' | 'running' | 'stopped';

/** @default 10 ms between ticks: events are spread evenly, not sent in bursts */
export const SIMULATOR_TICK_MS = 10;

/** Publishes waiting for an async store at most; beyond it a tick publishes nothing. */
export const MAX_IN_FLIGHT = 10_000;

/** A simulated publish: the stream it goes to and, traced, the context it carries. */
export interface SimulatedCommand {
  readonly orderId: string;
  readonly traceContext?: TraceContext;
}

/**
 * What every simulator shares (the order's and the payload domain's): its state, the
 * clock ticking every SIMULATOR_TICK_MS from `start()`, the steady rate's count of due
 * events, and the counting of publishes, so both domains publish at the same moments.
 */
export abstract class SimulatorClock {
  protected state: SimulatorState = 'idle';
  protected published = 0;
  protected failed = 0;
  /** Epoch ms (sub-ms precision) of the running schedule's start. */
  protected startedAtMs = 0;
  /** Async publishes not yet settled. */
  protected inFlight = 0;
  private timer?: NodeJS.Timeout;
  private due = 0;
  private durationMs = 0;
  /** Traces every synchronous publish; undefined with tracing off. */
  private readonly tracing: OrderTracing | undefined;

  constructor(tracing?: OrderTracing) {
    this.tracing = tracing?.enabled ? tracing : undefined;
  }

  /** One tick of the running schedule, `elapsedMs` after its start. */
  protected abstract tick(elapsedMs: number): void;

  /**
   * Starts the clock of a prepared schedule, stopping it after `durationMs` (0: until
   * stopped); false when there is none ready.
   */
  protected startClock(durationMs: number): boolean {
    if (this.state !== 'ready') return false;
    this.state = 'running';
    this.startedAtMs = performance.timeOrigin + performance.now();
    this.due = 0;
    this.durationMs = durationMs;
    this.timer = setInterval(() => this.onTick(), SIMULATOR_TICK_MS);
    return true;
  }

  private onTick(): void {
    const elapsedMs = performance.timeOrigin + performance.now() - this.startedAtMs;
    if (this.durationMs > 0 && elapsedMs >= this.durationMs) this.stopClock();
    else this.tick(elapsedMs);
  }

  protected stopClock(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.state === 'running' || this.state === 'ready') this.state = 'stopped';
  }

  /**
   * How many events to publish now at `ratePerOrder` x `orders` in aggregate (multiplied
   * in that order, as the load test's peers do, for the same floating-point result):
   * those due since start
   * and not yet published (a late tick catches up rather than silently lowering the
   * rate: the load test compares delivered against expected), at most what leaves room
   * for MAX_IN_FLIGHT publishes against a store that cannot keep up (e.g. Redis down).
   */
  protected dueNow(elapsedMs: number, ratePerOrder: number, orders: number): number {
    const target = Math.floor((elapsedMs / 1000) * ratePerOrder * orders);
    const n = Math.min(target - this.due, Math.max(0, MAX_IN_FLIGHT - this.inFlight));
    this.due += n;
    return n;
  }

  /**
   * Runs one synchronous publish of `kind` and counts it; with tracing on, in a root
   * `publish` span of its own, so a traced run pays what a traced caller's publish does.
   * Untraced, `publish` (made once by the caller) is called directly: nothing is allocated.
   */
  protected publishSync<C extends SimulatedCommand>(
    kind: string,
    cmd: C,
    publish: (cmd: C) => DomainEvent,
  ): void {
    try {
      if (this.tracing === undefined) publish(cmd);
      else
        this.tracing.publishSync({ orderId: cmd.orderId, kind }, (traceContext) =>
          publish(traceContext === undefined ? cmd : { ...cmd, traceContext }),
        );
      this.published++;
    } catch {
      this.failed++;
    }
  }

  /**
   * Runs one async publish. A store outage (or an order already finished by an outside
   * publish) must not stop the simulator; failures are counted and visible in its status.
   */
  protected async counted(publish: () => Promise<unknown>): Promise<boolean> {
    this.inFlight++;
    try {
      await publish();
      this.published++;
      return true;
    } catch {
      this.failed++;
      return false;
    } finally {
      this.inFlight--;
    }
  }
}
