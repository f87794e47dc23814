import type { ServiceEndpoints } from '../service/launcher';

/** What 1a used: events big enough that a few fill a stalled reader's socket buffers. */
export const PADDING_BYTES = 60_000;
const PUBLISH_TIMEOUT_MS = 5_000;

/**
 * Publishes large payloads to one stream through the payload domain's publish route
 * (the simulator's size is one for every stream, and the canaries' streams stay small),
 * `perSec` a second until `max` or `stop()`; the first creates the stream.
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
    this.url = `http://${service.host}:${service.httpPort}/v1/streams/${encodeURIComponent(orderId)}/payload`;
  }

  /** One payload of `bytes`. */
  private async post(bytes: number): Promise<boolean> {
    try {
      const res = await fetch(this.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(this.token === undefined ? {} : { authorization: `Bearer ${this.token}` }),
        },
        body: JSON.stringify({ bytes }),
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

  /** Creates the stream (a small first payload), then publishes large ones. */
  async start(perSec: number, max: number): Promise<void> {
    if (!(await this.post(0))) throw new Error(`could not create ${this.orderId}`);
    let inFlight = false;
    this.timer = setInterval(
      () => {
        if (inFlight || this.published >= max) return;
        inFlight = true;
        void this.post(PADDING_BYTES).finally(() => (inFlight = false));
      },
      Math.max(1, Math.round(1000 / perSec)),
    );
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
