import {
  AlwaysOnSampler,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { PAYLOAD_DOMAIN, type PayloadEvent, type PayloadSnapshot } from '@app/payload-domain';
import { InMemoryStreamStore } from '@app/store';
import { OrderTracing } from '../tracing/order-tracing';
import { PayloadSimulator } from './payload-simulator';

describe('PayloadSimulator', () => {
  let store: InMemoryStreamStore<PayloadEvent, PayloadSnapshot>;
  let events: PayloadEvent[];

  beforeEach(() => {
    jest.useFakeTimers();
    store = new InMemoryStreamStore({ domain: PAYLOAD_DOMAIN });
    events = [];
    store.events$.subscribe((e) => events.push(e));
  });
  afterEach(() => {
    jest.useRealTimers();
    store.close();
  });

  it('publishes at the aggregate rate, round robin, each payload of the schedule size', async () => {
    const sim = new PayloadSimulator(store);
    await sim.prepare({ orders: 4, ratePerOrder: 25, payloadBytes: 40, prefix: 's' });
    events.length = 0;
    sim.start();
    jest.advanceTimersByTime(1_000);
    sim.stop();

    expect(events.length).toBeGreaterThanOrEqual(100 - 4);
    expect(events.length).toBeLessThanOrEqual(100);
    expect(new Set(events.map((e) => e.orderId))).toEqual(new Set(['s-1', 's-2', 's-3', 's-4']));
    expect(events.every((e) => e.payload.length === 40)).toBe(true);
  });

  it('with tracing on, makes every publish a root simulator span, as the order simulator does', async () => {
    jest.useRealTimers(); // the span processor's flush waits on real timers
    const exporter = new InMemorySpanExporter();
    const provider = new TracerProvider({
      sampler: new AlwaysOnSampler(),
      spanProcessors: [new SimpleSpanProcessor({ exporter })],
    });
    const sim = new PayloadSimulator(store, new OrderTracing(provider, 'memory'));
    await sim.prepare({ orders: 2, ratePerOrder: 50, payloadBytes: 8 });
    events.length = 0;
    sim.start();
    await new Promise((resolve) => setTimeout(resolve, 200));
    sim.stop();
    await provider.forceFlush();
    const spans = exporter.getFinishedSpans();
    await provider.shutdown();

    expect(events.length).toBeGreaterThan(0);
    expect(spans.map((s) => [s.name, s.parentSpanContext])).toEqual(
      events.map(() => ['publish', undefined]),
    );
    const named = [
      'order_status.order_id',
      'order_status.seq',
      'order_status.event_kind',
      'order_status.publish_api',
      'order_status.store',
    ];
    expect(spans.map((s) => named.map((key) => s.attributes[key]))).toEqual(
      events.map((e) => [e.orderId, e.seq, 'payload', 'simulator', 'memory']),
    );
  });
});
