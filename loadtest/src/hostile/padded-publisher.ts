import type { ServiceEndpoints } from '../service/launcher';

/** What 1a used: events big enough that a few fill a stalled reader's socket buffers. */
export const PADDING_BYTES = 60_000;
const PUBLISH_TIMEOUT_MS = 5_000;

/**
 * Publishes `status` events with large padding to one order through the REST publish API
 * (the simulator's padding is one size for every order, and the canaries' orders stay
 * small), `perSec` a second until `max` or `stop()`.
 */
export class PaddedPublisher {
  published = 0;
  failed = 0;
  private timer?: NodeJS.Timeout;
  private readonly url: string;

  constructor(
    service: ServiceEndpoints,
    private readonly token: string | undefined,
    readonly orderId: string,
  ) {
    this.url = `http://${service.host}:${service.httpPort}/v1/orders/${encodeURIComponent(orderId)}/status`;
  }

  async post(status: string, paddingBytes = PADDING_BYTES): Promise<boolean> {
    try {
      const res = await fetch(this.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(this.token === undefined ? {} : { authorization: `Bearer ${this.token}` }),
        },
        body: JSON.stringify({ status, paddingBytes }),
        signal: AbortSignal.timeout(PUBLISH_TIMEOUT_MS),
      });
      await res.arrayBuffer();
      if (res.ok) this.published++;
      else this.failed++;
      return res.ok;
    } catch {
      this.failed++;
      return false;
    }
  }

  /** Creates the order (small), then publishes padded `paid` events in the background. */
  async start(perSec: number, max: number): Promise<void> {
    if (!(await this.post('created', 0))) throw new Error(`could not create ${this.orderId}`);
    let inFlight = false;
    this.timer = setInterval(
      () => {
        if (inFlight || this.published >= max) return;
        inFlight = true;
        void this.post('paid').finally(() => (inFlight = false));
      },
      Math.max(1, Math.round(1000 / perSec)),
    );
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
