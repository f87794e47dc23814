import type { EventSource } from 'eventsource';
import { PAYLOAD_DOMAIN } from '@app/payload-domain';
import { authorizedEventSource } from '../../support/event-source';
import { waitFor } from '../../support/wait-for';

/**
 * The well-behaved subscriber next to the hostile clients: an EventSource on the plain
 * HTTP/1.1 port, which reconnects after every stream end (max age) with Last-Event-ID,
 * exactly as a browser does. It must see every event of its order, in order, once.
 */
export class Canary {
  readonly seqs: number[] = [];
  private readonly es: EventSource;

  constructor(httpUrl: string, orderId: string) {
    this.es = authorizedEventSource(`${httpUrl}/v1/orders/${orderId}/stream?after=0`);
    // Status changes and tracking updates share the order's seqs; a payload stream (the
    // load test's domain, for big events) has its one kind.
    for (const name of ['status', 'tracking', ...PAYLOAD_DOMAIN.kinds.map((k) => k.wireName)]) {
      this.es.addEventListener(name, (e) => {
        this.seqs.push((JSON.parse(e.data) as { seq: number }).seq);
      });
    }
  }

  /** Waits (bounded) until the canary has seen `seq`. */
  async reached(seq: number, timeoutMs: number): Promise<void> {
    await waitFor(
      () => this.seqs.includes(seq),
      `canary reached seq ${seq} (last seen ${this.seqs.at(-1) ?? 'none'})`,
      timeoutMs,
    );
  }

  /** Every seq from 1 to `lastSeq`, in order, no gap, no duplicate. */
  expectEverything(lastSeq: number): void {
    expect(this.seqs).toEqual(Array.from({ length: lastSeq }, (_, i) => i + 1));
  }

  close(): void {
    this.es.close();
  }
}
