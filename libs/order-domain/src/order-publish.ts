import { ErrorCode, GatewayError } from '@app/contracts/gateway-error';
import {
  type GeoPoint,
  type OrderEvent,
  type OrderSnapshot,
  type OrderStatusChanged,
  type TrackingUpdated,
} from './order-events';
import {
  canTransition,
  isOrderStatus,
  isTerminalStatus,
  ORDER_STATUSES,
  OrderStatus,
  TRACKING_STATUSES,
  trackingRefusal,
  transitionRefusal,
} from './order-status';
import type {
  AppendOptions,
  AppendRule,
  DomainAppend,
  EventDraft,
  StoredStream,
} from '@app/contracts/stream-domain';
import type { TraceContext } from '@app/contracts/trace-context';
import { parseStatusReason, parseTracking } from './validation';

/** A status change to publish (see `publishStatus`). */
export interface PublishCommand extends AppendOptions {
  readonly orderId: string;
  readonly status: OrderStatus;
  /** Why the order is cancelled: only with `cancelled` (InvalidArgument otherwise). */
  readonly reason?: string;
}

/** A tracking update to publish (see `publishTracking`). */
export interface TrackingCommand {
  readonly orderId: string;
  readonly location: GeoPoint;
  /** Estimated time of arrival, epoch ms. */
  readonly etaMs: number;
  /** As for a status change (`AppendOptions.idempotencyKey`). */
  readonly idempotencyKey?: string;
  /** As for a status change (`AppendOptions.traceContext`). */
  readonly traceContext?: TraceContext;
}

/** The store side of a publish (`StreamStore.append`), all the order publish needs of it. */
export interface OrderAppender {
  append(
    draft: EventDraft<OrderEvent>,
    rule: AppendRule,
    options?: AppendOptions,
  ): Promise<OrderEvent>;
  appendSync?(draft: EventDraft<OrderEvent>, rule: AppendRule, options?: AppendOptions): OrderEvent;
}

function notFound(orderId: string): GatewayError {
  return new GatewayError(
    ErrorCode.NotFound,
    `order ${orderId} does not exist; it must be published as created first`,
  );
}

function unknownStatus(): GatewayError {
  return new GatewayError(ErrorCode.InvalidArgument, 'status must be a known order status');
}

/**
 * The rule of a status change to `status`: the life cycle (`canTransition`) as the list of
 * statuses it may follow, built once per status, so a publish allocates no rule.
 */
function statusRule(status: OrderStatus): AppendRule {
  return {
    creates: canTransition(undefined, status),
    follows: ORDER_STATUSES.filter((s) => canTransition(s, status)),
    phase: status,
    priorPhaseField: 'previousStatus',
    ends: isTerminalStatus(status),
    refusal: (orderId, phase) =>
      phase === undefined || !isOrderStatus(phase)
        ? notFound(orderId)
        : new GatewayError(
            ErrorCode.FailedPrecondition,
            transitionRefusal(orderId, phase, status) ??
              `order ${orderId} cannot move from ${phase} to ${status}`,
          ),
  };
}

const STATUS_RULES = new Map(ORDER_STATUSES.map((s) => [s, statusRule(s)] as const));

/** A tracking update: in a status that accepts it; the status stays and rides on the event. */
const TRACKING_RULE: AppendRule = {
  creates: false,
  follows: TRACKING_STATUSES,
  priorPhaseField: 'status',
  keeps: { field: 'tracking', of: ['location', 'etaMs'] },
  ends: false,
  refusal: (orderId, phase) =>
    phase === undefined || !isOrderStatus(phase)
      ? notFound(orderId)
      : new GatewayError(ErrorCode.FailedPrecondition, trackingRefusal(orderId, phase)),
};

/** The snapshot's tracking as a field-keeping store kept it (absent or unreadable: none). */
function storedTracking(json: string | undefined): OrderSnapshot['tracking'] {
  if (json === undefined) return undefined;
  try {
    const stored = JSON.parse(json) as { location?: unknown; etaMs?: unknown };
    return parseTracking(stored.location, stored.etaMs);
  } catch {
    return undefined;
  }
}

/**
 * How order events are appended: the life cycle as rules the stores apply (the Redis
 * store in its script), the status as the stream's phase (kept as `status`, so Redis
 * hashes written before the rules became data read the same).
 */
export const ORDER_APPEND: DomainAppend<OrderEvent, OrderSnapshot> = {
  phaseField: 'status',
  rule: (draft) => {
    if ('location' in draft) return TRACKING_RULE;
    const rule = STATUS_RULES.get(draft.status as OrderStatus);
    if (rule === undefined) throw unknownStatus();
    return rule;
  },
  snapshotOf: (stored: StoredStream) => {
    if (!isOrderStatus(stored.phase)) return undefined;
    const tracking = storedTracking(stored.fields.tracking);
    const ownerId = stored.fields.ownerId;
    return {
      orderId: stored.orderId,
      status: stored.phase,
      lastSeq: stored.lastSeq,
      updatedAtUs: stored.updatedAtUs,
      ...(tracking !== undefined ? { tracking } : {}),
      ...(ownerId !== undefined ? { ownerId } : {}),
    };
  },
};

/** The draft of a status change (its reason checked) and the options of its append. */
function statusAppend(cmd: PublishCommand): [EventDraft<OrderStatusChanged>, AppendOptions] {
  const { orderId, status, ownerId, idempotencyKey, traceContext } = cmd;
  if (!isOrderStatus(status)) throw unknownStatus();
  const reason = parseStatusReason(status, cmd.reason);
  return [
    { orderId, status, ...(reason !== undefined ? { reason } : {}) },
    { ownerId, idempotencyKey, traceContext },
  ];
}

/** The draft of a tracking update (location and ETA checked). */
function trackingDraft(cmd: TrackingCommand): EventDraft<TrackingUpdated> {
  const { location, etaMs } = parseTracking(cmd.location, cmd.etaMs);
  return { orderId: cmd.orderId, location, etaMs };
}

/** The options of a tracking update's append: it creates no order, so it has no owner. */
function trackingOptions({ idempotencyKey, traceContext }: TrackingCommand): AppendOptions {
  return { idempotencyKey, traceContext };
}

/**
 * Publishes a status change and returns the event with its assigned seq.
 * @throws GatewayError FailedPrecondition for a transition the life cycle forbids (a
 *   repeated status included) or an idempotency key repeated with another request
 *   (IdempotencyKeyReused), NotFound when the order does not exist and the status is not
 *   `created`, InvalidArgument for a reason on another status than `cancelled`,
 *   Unavailable when the store is down.
 */
export async function publishStatus(
  store: OrderAppender,
  cmd: PublishCommand,
): Promise<OrderStatusChanged> {
  const [draft, options] = statusAppend(cmd);
  return (await store.append(draft, ORDER_APPEND.rule(draft), options)) as OrderStatusChanged;
}

/**
 * Publishes a tracking update (the order's next seq; its status stays).
 * @throws GatewayError FailedPrecondition unless the order accepts tracking
 *   (`acceptsTracking`) or for an idempotency key repeated with another request; NotFound
 *   for an unknown order; InvalidArgument for a location or ETA out of range.
 */
export async function publishTracking(
  store: OrderAppender,
  cmd: TrackingCommand,
): Promise<TrackingUpdated> {
  const draft = trackingDraft(cmd);
  const event = await store.append(draft, TRACKING_RULE, trackingOptions(cmd));
  return event as TrackingUpdated;
}

function appendSync(
  store: OrderAppender,
  draft: EventDraft<OrderEvent>,
  rule: AppendRule,
  options: AppendOptions,
): OrderEvent {
  if (store.appendSync === undefined) {
    throw new TypeError('this store cannot append synchronously (an in-process store can)');
  }
  return store.appendSync(draft, rule, options);
}

/**
 * `publishStatus` on a store that appends synchronously (the in-process one): the
 * simulator publishes tens of thousands of events a second, with no promise per event.
 */
export function publishStatusSync(store: OrderAppender, cmd: PublishCommand): OrderStatusChanged {
  const [draft, options] = statusAppend(cmd);
  return appendSync(store, draft, ORDER_APPEND.rule(draft), options) as OrderStatusChanged;
}

/** `publishTracking`, synchronously, for the same reason as `publishStatusSync`. */
export function publishTrackingSync(store: OrderAppender, cmd: TrackingCommand): TrackingUpdated {
  const draft = trackingDraft(cmd);
  return appendSync(store, draft, TRACKING_RULE, trackingOptions(cmd)) as TrackingUpdated;
}
