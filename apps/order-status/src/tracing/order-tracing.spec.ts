import {
  AlwaysOnSampler,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { DomainEvent, TraceContext } from '@app/contracts';
import { ErrorCode, GatewayError } from '@app/contracts';
import { OrderTracing } from './order-tracing';

const EVENT: DomainEvent = { orderId: 'o-1', seq: 3, publishedAtUs: 1 };

/** OrderTracing on an in-memory exporter: every ended span, once flushed. */
function traced() {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({
    sampler: new AlwaysOnSampler(),
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
  const tracing = new OrderTracing(provider, 'memory');
  const delivery = tracing.delivery;
  if (delivery === undefined) throw new Error('tracing is on');
  /** What the bus does with an event the store announces: one fan-out, `writes` written. */
  const fanOut = (context: TraceContext | undefined, writes: string[]) => {
    const trace = delivery.begin(EVENT, context);
    for (const transport of writes) trace?.written(transport, EVENT);
    trace?.end(writes.length);
  };
  const spans = async () => {
    await provider.forceFlush();
    return exporter.getFinishedSpans();
  };
  return { tracing, fanOut, spans };
}

describe('OrderTracing', () => {
  it('records a fan-out that runs inside the append on the appending span, not a deliver span', async () => {
    const { tracing, fanOut, spans } = traced();
    tracing.publishSync({ orderId: 'o-1', kind: 'status' }, (context) => {
      fanOut(context, ['sse', 'sse', 'grpc']);
      return EVENT;
    });
    await tracing.publish(undefined, { orderId: 'o-1', kind: 'payload' }, (store) =>
      store((context) => {
        fanOut(context, ['websocket']);
        return Promise.resolve(EVENT);
      }),
    );

    const [simulated, store, publish] = await spans();
    expect([simulated.name, store.name, publish.name]).toEqual(['publish', 'store', 'publish']);
    expect(simulated.attributes).toMatchObject({
      'order_status.publish_api': 'simulator',
      'order_status.seq': 3,
      'order_status.subscribers': 3,
      'order_status.writes': 3,
    });
    expect(simulated.events.map((e) => e.attributes)).toEqual([
      { 'order_status.transport': 'sse', 'order_status.writes': 2 },
      { 'order_status.transport': 'grpc', 'order_status.writes': 1 },
    ]);
    expect(store.attributes).toMatchObject({ 'order_status.writes': 1 });
  });

  it('gives a fan-out after the append (a context that crossed Redis) its own deliver span', async () => {
    const { tracing, fanOut, spans } = traced();
    let carried: TraceContext | undefined;
    tracing.publishSync({ orderId: 'o-1', kind: 'status' }, (context) => {
      carried = context;
      return EVENT;
    });
    fanOut(carried, ['sse']);
    fanOut(carried === undefined ? undefined : { ...carried }, ['sse']);

    const finished = await spans();
    expect(finished.map((s) => s.name)).toEqual(['publish', 'deliver', 'deliver']);
    const [publish, deliver] = finished;
    expect(deliver.parentSpanContext?.spanId).toBe(publish.spanContext().spanId);
    expect(publish.attributes['order_status.writes']).toBeUndefined();
  });

  it('ends a failed publish, synchronous or not, with its error and gateway code', async () => {
    const { tracing, spans } = traced();
    const refusal = new GatewayError(ErrorCode.Unavailable, 'store down');
    expect(() =>
      tracing.publishSync({ orderId: 'o-1', kind: 'status' }, () => {
        throw refusal;
      }),
    ).toThrow(refusal);
    await expect(
      tracing.publish(undefined, { orderId: 'o-1', kind: 'status' }, (store) =>
        store(() => Promise.reject(refusal)),
      ),
    ).rejects.toBe(refusal);

    const finished = await spans();
    expect(
      finished.map((s) => [s.name, s.status.code, s.attributes['order_status.error_code']]),
    ).toEqual([
      ['publish', 2, ErrorCode.Unavailable],
      ['store', 2, ErrorCode.Unavailable],
      ['publish', 2, ErrorCode.Unavailable],
    ]);
  });
});
