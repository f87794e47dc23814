/**
 * The attributes and names of the spans the service makes (docs/tracing.md lists them).
 * The service's own attributes are under `order_status.` (OpenTelemetry's naming rule for
 * attributes no semantic convention covers).
 */
export const SPAN_PUBLISH = 'publish';
export const SPAN_STORE = 'store';
export const SPAN_DELIVER = 'deliver';
/** The span event of a deliver span: one per transport, with its count of writes. */
export const EVENT_WRITE = 'write';

export const ATTR_ORDER_ID = 'order_status.order_id';
export const ATTR_SEQ = 'order_status.seq';
/** `status` or `tracking`: which kind of event a publish makes. */
export const ATTR_EVENT_KIND = 'order_status.event_kind';
export const ATTR_PUBLISH_API = 'order_status.publish_api';
/** True when an idempotency key answered an earlier publish's event (nothing stored). */
export const ATTR_REPLAY = 'order_status.idempotent_replay';
/** `memory`, `redis` or `redis-cluster`. */
export const ATTR_STORE = 'order_status.store';
export const ATTR_ERROR_CODE = 'order_status.error_code';
/** Subscribers on this instance offered the event. */
export const ATTR_SUBSCRIBERS = 'order_status.subscribers';
/** Of those, how many wrote it to their connection during the fan-out. */
export const ATTR_WRITES = 'order_status.writes';
export const ATTR_TRANSPORT = 'order_status.transport';

/** The tracer's name: the instrumentation scope of every span above. */
export const TRACER_NAME = 'order-status';
