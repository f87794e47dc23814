import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { OrderStatus } from '@app/order-domain';
import type { OtlpReceiver, ReceivedSpan } from '../support/otlp-receiver';
import type { TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

/** Exports every 20 ms, so a test waits for its spans for milliseconds, not seconds. */
export function tracingEnv(receiver: OtlpReceiver, serviceName: string): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_SERVICE_NAME: serviceName,
    OTEL_BSP_SCHEDULE_DELAY: '20',
  };
}

/** A caller's span: a fresh trace id and span id, sampled (flags 01). */
export function callerContext(): { traceId: string; spanId: string; traceparent: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

/** `POST /v1/orders/:id/status` with the caller's trace headers; answers status, headers, body. */
export async function restPublish(
  app: TestApp,
  orderId: string,
  status: OrderStatus,
  headers: Record<string, string>,
): Promise<{
  statusCode: number;
  headers: Record<string, unknown>;
  body: Record<string, unknown>;
}> {
  const res = await request(`${app.httpUrl}/v1/orders/${orderId}/status`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...app.authHeaders, ...headers },
    body: JSON.stringify({ status }),
  });
  return {
    statusCode: res.statusCode,
    headers: res.headers,
    body: (await res.body.json()) as Record<string, unknown>,
  };
}

/** The spans of `traceId` once `done` says they are all in (bounded wait). */
export async function traceOf(
  receiver: OtlpReceiver,
  traceId: string,
  done: (spans: ReceivedSpan[]) => boolean,
  what: string,
): Promise<ReceivedSpan[]> {
  let spans: ReceivedSpan[] = [];
  await waitFor(
    () => done((spans = receiver.spans.filter((s) => s.traceId === traceId))),
    `${what}: got ${spans.map((s) => `${s.serviceName}/${s.name}`).join(', ') || 'nothing'} (${receiver.exports} exports, ${receiver.spans.length} spans, refused: ${receiver.rejected.join('; ') || 'none'})`,
    10_000,
  );
  return spans;
}

/** The one span named `name` in `spans` (fails on none or several). */
export function only(spans: readonly ReceivedSpan[], name: string, service?: string): ReceivedSpan {
  const found = spans.filter(
    (s) => s.name === name && (service === undefined || s.serviceName === service),
  );
  if (found.length !== 1) {
    throw new Error(
      `expected one ${name} span${service ? ` of ${service}` : ''}, got ${found.length}`,
    );
  }
  return found[0];
}

/** What a publish's `publish` and `store` spans say (`publish_api` is REST's). */
export interface PublishExpectation {
  readonly orderId: string;
  readonly kind: string;
  readonly store: string;
  readonly seq: number;
  /** The instance that published (its OTEL_SERVICE_NAME); any when absent. */
  readonly service?: string;
}

/**
 * The trace's `publish` span, a server span child of the caller's, and its `store` span,
 * each checked against what the publish was.
 */
export function publishAndStore(
  spans: readonly ReceivedSpan[],
  caller: { readonly spanId: string },
  expected: PublishExpectation,
): { publish: ReceivedSpan; store: ReceivedSpan } {
  const publish = only(spans, 'publish', expected.service);
  const store = only(spans, 'store', expected.service);
  expect(publish).toMatchObject({ parentSpanId: caller.spanId, kind: SPAN_KIND.server });
  expect(publish.attributes).toMatchObject({
    'order_status.order_id': expected.orderId,
    'order_status.publish_api': 'rest',
    'order_status.event_kind': expected.kind,
    'order_status.seq': expected.seq,
  });
  expect(store).toMatchObject({ parentSpanId: publish.spanId, kind: SPAN_KIND.internal });
  expect(store.attributes).toMatchObject({
    'order_status.store': expected.store,
    'order_status.seq': expected.seq,
  });
  return { publish, store };
}

/** A deliver span's writes by transport, from its `write` span events. */
export function writesByTransport(span: ReceivedSpan): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of span.events) {
    if (e.name === 'write')
      out[String(e.attributes['order_status.transport'])] = Number(
        e.attributes['order_status.writes'],
      );
  }
  return out;
}

/** OTLP's SpanKind numbers. */
export const SPAN_KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;
