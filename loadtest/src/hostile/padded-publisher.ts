import type { ServiceEndpoints } from '../service/launcher';

/** What 1a used: events big enough that a few fill a stalled reader's socket buffers. */
export const PADDING_BYTES = 60_000;
const PUBLISH_TIMEOUT_MS = 5_000;

/**
 * Publishes tracking updates with large padding to one order through the REST publish API
 * (the simulator's padding is one size for every order, and the canaries' orders stay
 * small), `perSec` a second until `max` or `stop()`. Tracking updates, since a status
 * may not repeat: the order is created and shipped first.
 */
export class PaddedPublisher {
  published = 0;
  failed = 0;
  private timer?: NodeJS.Timeout;
  private readonly orderUrl: string;

  constructor(
    service: ServiceEndpoints,
    private readonly token: string | undefined,
    readonly orderId: string,
  ) {
    this.orderUrl = `http://${service.host}:${service.httpPort}/v1/orders/${encodeURIComponent(orderId)}`;
  }

  /** A status change (`{ status }`) or a tracking update (`{ location, etaMs }`). */
  private async post(route: 'status' | 'tracking', body: object): Promise<boolean> {
    try {
      const res = await fetch(`${this.orderUrl}/${route}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(this.token === undefined ? {} : { authorization: `Bearer ${this.token}` }),
        },
        body: JSON.stringify(body),
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

  /** Creates and ships the order (small), then publishes padded tracking updates. */
  async start(perSec: number, max: number): Promise<void> {
    for (const status of ['created', 'shipped']) {
      if (!(await this.post('status', { status }))) {
        throw new Error(`could not publish ${status} for ${this.orderId}`);
      }
    }
    let inFlight = false;
    this.timer = setInterval(
      () => {
        if (inFlight || this.published >= max) return;
        inFlight = true;
        const tracking = { location: { lat: 52.52, lon: 13.405 }, etaMs: Date.now() + 600_000 };
        void this.post('tracking', { ...tracking, paddingBytes: PADDING_BYTES }).finally(
          () => (inFlight = false),
        );
      },
      Math.max(1, Math.round(1000 / perSec)),
    );
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
