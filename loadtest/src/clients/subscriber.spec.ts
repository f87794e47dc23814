import { RunMetrics, Subscriber } from './subscriber';
import type { Connector, OpenStream, StreamHandlers } from './transport';

/** A connector whose one stream the test drives by hand. */
class HandConnector implements Connector {
  readonly transport = 'sse' as const;
  requests = 0;
  handlers: StreamHandlers | undefined;

  open(_orderId: string, _afterSeq: number, handlers: StreamHandlers): OpenStream {
    this.requests += 1;
    this.handlers = handlers;
    return { close: () => undefined };
  }

  async close(): Promise<void> {}

  event(seq: number, publishedAtUs: number): void {
    this.handlers?.onEvent({ orderId: 'o-1', seq, publishedAtUs });
  }
}

describe('Subscriber: what a run counts', () => {
  const open = (
    measureLatency: boolean,
  ): { metrics: RunMetrics; conn: HandConnector; sub: Subscriber } => {
    const metrics = new RunMetrics();
    const conn = new HandConnector();
    const sub = new Subscriber('o-1', 0, conn, metrics, { reconnect: false, measureLatency });
    sub.start();
    conn.handlers?.onOpen();
    return { metrics, conn, sub };
  };

  it('counts as delivered in the window the events published in it, whenever they are read', () => {
    const { metrics, conn } = open(false);
    metrics.measureFromUs = 1_000;
    conn.event(1, 999); // published before the window opened, read inside it
    conn.event(2, 1_000);
    conn.event(3, 1_500);
    metrics.measureToUs = 2_000;
    conn.event(4, 1_999); // published inside, read after the window closed
    conn.event(5, 2_000); // published after
    expect(metrics.delivered).toBe(5);
    expect(metrics.deliveredInWindow).toBe(3);
  });

  it('counts a duplicate once', () => {
    const { metrics, conn } = open(false);
    metrics.measureFromUs = 0;
    conn.event(1, 10);
    conn.event(1, 10);
    expect(metrics.deliveredInWindow).toBe(1);
  });

  it('records latency only for a sampled subscriber, and only inside the window', () => {
    const sampled = open(true);
    const unsampled = open(false);
    const now = Date.now() * 1000;
    for (const { metrics } of [sampled, unsampled]) metrics.measureFromUs = now - 1_000_000;
    sampled.conn.event(1, now - 2_000_000); // before the window: no sample
    sampled.conn.event(2, now);
    unsampled.conn.event(1, now);
    expect(sampled.metrics.latency.summary().count).toBe(1);
    expect(unsampled.metrics.latency.summary().count).toBe(0);
  });
});
