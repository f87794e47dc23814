import { Inject, Injectable } from '@nestjs/common';
import { authorizeWrite, ownerForNewOrder, type Principal } from '@app/auth';
import {
  parseIdempotencyKey,
  scopedIdempotencyKey,
  type DomainEvent,
  type TraceContext,
} from '@app/contracts';
import {
  publishStatus,
  publishTracking,
  type OrderEvent,
  type OrderSnapshot,
  type OrderStatusChanged,
  type PublishCommand,
  type TrackingCommand,
  type TrackingUpdated,
} from '@app/order-domain';
import { StreamEventBus } from '@app/event-bus';
import { StreamStore } from '@app/store';
import { AuthService } from '../auth/auth.service';
import type { OrderBus } from '../bus/event-bus.module';
import { PublishRateLimiter } from '../auth/publish-rate.limiter';
import { OrderTracing, type PublishTarget } from '../tracing/order-tracing';
import type { PublishOrigin } from '../tracing/trace-headers';

/** Who publishes, and the idempotency key as their API carried it. */
export interface PublishCaller {
  readonly principal: Principal;
  /** The key as sent (`Idempotency-Key`, `request_id`); undefined: none. */
  readonly rawKey: unknown;
  /** The key's name in the caller's API, for the refusal's message. */
  readonly keyField: string;
  /** The publish's API and the caller's W3C trace context, for its spans. */
  readonly origin?: PublishOrigin;
}

/** What a publish hands the store beside its event: the scoped key, the trace context. */
export interface PublishOptions {
  readonly idempotencyKey?: string;
  readonly traceContext?: TraceContext;
}

/** A status change as a publish API received it; `ownerId` is the requested owner. */
export type StatusChange = Omit<PublishCommand, 'idempotencyKey'>;

/** A tracking update as a publish API received it. */
export type TrackingChange = Omit<TrackingCommand, 'idempotencyKey'>;

/**
 * The one publish path of REST and gRPC, so both answer the same commands alike. Each API
 * parses its own request first, so invalid input never spends the caller's publish rate;
 * then here: `orders:write`, the key (malformed is refused before the rate is spent),
 * the rate, the key scoped to the caller (one caller's key never replays another's
 * publish), the owner of a new order.
 */
@Injectable()
export class OrderPublisher {
  constructor(
    @Inject(StreamStore) private readonly store: StreamStore<OrderEvent, OrderSnapshot>,
    @Inject(StreamEventBus) private readonly bus: OrderBus,
    @Inject(AuthService) private readonly auth: AuthService,
    @Inject(PublishRateLimiter) private readonly publishRate: PublishRateLimiter,
    @Inject(OrderTracing) private readonly tracing: OrderTracing,
  ) {}

  /** `isReplay()` tells a repeat of an earlier key's publish from a new event. */
  publishStatus(caller: PublishCaller, change: StatusChange): Promise<OrderStatusChanged> {
    const target = { orderId: change.orderId, kind: 'status' };
    return this.publish(caller, target, (options) =>
      publishStatus(this.store, {
        ...change,
        ownerId: ownerForNewOrder(caller.principal, change.ownerId),
        ...options,
      }),
    );
  }

  publishTracking(caller: PublishCaller, change: TrackingChange): Promise<TrackingUpdated> {
    const target = { orderId: change.orderId, kind: 'tracking' };
    return this.publish(caller, target, (options) =>
      publishTracking(this.store, { ...change, ...options }),
    );
  }

  /** The order's current state, with its owner; only the owner or `orders:read:any`. */
  async snapshot(principal: Principal, orderId: string, transport: string): Promise<OrderSnapshot> {
    // The service's store is the order store: its snapshots are the order's.
    const stored = (await this.auth.authorizeRead(principal, orderId, transport)) as OrderSnapshot;
    // The bus may be fresher (a shared store's notification already arrived); the owner
    // lives with the stored order.
    const live = await this.bus.getSnapshot(orderId);
    if (!live || live.lastSeq <= stored.lastSeq) return stored;
    return stored.ownerId !== undefined ? { ...live, ownerId: stored.ownerId } : live;
  }

  /**
   * Runs a publish of any domain (the payload domain's too) in its `publish` and `store`
   * spans, through the same checks: scope, key, rate, the key scoped to the caller.
   * `append` gets the key and the trace context to hand the store.
   */
  publish<E extends DomainEvent>(
    caller: PublishCaller,
    target: PublishTarget,
    append: (options: PublishOptions) => Promise<E>,
  ): Promise<E> {
    return this.tracing.publish(caller.origin, target, (store) =>
      this.keyed(caller, (key) => store((traceContext) => append({ ...key, traceContext }))),
    );
  }

  private async keyed<E>(
    caller: PublishCaller,
    publish: (key: { readonly idempotencyKey?: string }) => Promise<E>,
  ): Promise<E> {
    const { principal } = caller;
    authorizeWrite(principal);
    const key = parseIdempotencyKey(caller.rawKey, caller.keyField);
    await this.publishRate.consume(principal);
    return publish(
      key === undefined ? {} : { idempotencyKey: scopedIdempotencyKey(principal.subject, key) },
    );
  }
}
