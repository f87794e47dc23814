/** The service simulator's tick (SIMULATOR_TICK_MS in apps/order-status/src/simulator/simulator.ts). */
export const STEADY_TICK_MS = 10;

/**
 * The service simulator's steady schedule, for the load test's peer servers (the bare
 * server and the Nchan publisher): every tick publishes what is due at the aggregate rate
 * (orders x rate per order) since start, handed out round robin over the orders, a late
 * tick catching up. The overhead and broadcast scenarios divide the service's CPU by the
 * peer's, so the peer must publish the same events at the same moments: publishing every
 * order's event in the same tick (as the peers once did) lets a server answer many
 * subscribers in one write, one TLS record and one HTTP/2 send, and makes the floor
 * cheaper than the same load is. A spec compares the two schedules tick by tick.
 */
export class SteadyPacer {
  private timer?: NodeJS.Timeout;

  /**
   * @param publish called once per event, in order: the order's index and how many events
   *   that order has published before this one.
   */
  constructor(
    private readonly orders: number,
    private readonly ratePerOrder: number,
    private readonly publish: (order: number, step: number) => void,
  ) {}

  start(): void {
    this.stop();
    const startedAt = performance.now();
    let due = 0;
    let cursor = 0;
    const steps = new Array<number>(this.orders).fill(0);
    this.timer = setInterval(() => {
      // The simulator's expression, factor by factor: the same floating-point result.
      const elapsedS = (performance.now() - startedAt) / 1000;
      const target = Math.floor(elapsedS * this.ratePerOrder * this.orders);
      for (; due < target; due += 1) {
        this.publish(cursor, steps[cursor]++);
        cursor = (cursor + 1) % this.orders;
      }
    }, STEADY_TICK_MS);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
