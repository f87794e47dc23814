import type { Observable } from 'rxjs';
import type { OrderSnapshot, OrderStatus, OrderStatusChanged } from '@app/contracts';

export interface PublishCommand {
  readonly orderId: string;
  readonly status: OrderStatus;
  /** Filler bytes copied into the event, for payload-size experiments. */
  readonly paddingBytes?: number;
}

/**
 * Where events are made and kept: assigns each order's next seq atomically, enforces the
 * life cycle and announces every published event on `events$`. The bus feeds from
 * `events$`; it never publishes itself. Implementations: the in-memory store (embedded
 * default) and a Redis store (several instances). Used as an abstract-class DI token.
 */
export abstract class OrderStore {
  /** Every event published through this store (or, for a shared store, any instance). */
  abstract readonly events$: Observable<OrderStatusChanged>;

  /**
   * Publishes a status change and returns the event with its assigned seq.
   * @throws GatewayError InvalidArgument/FailedPrecondition for a transition the life
   *   cycle forbids, Unavailable when the backing store is down.
   */
  abstract publish(cmd: PublishCommand): Promise<OrderStatusChanged>;

  /** The order's current state, or undefined when it does not exist (or was evicted). */
  abstract getSnapshot(orderId: string): Promise<OrderSnapshot | undefined>;

  /**
   * Events with seq > afterSeq from the store's own history, for resumes the bus's local
   * ring cannot serve; undefined when the store keeps no history that far back.
   */
  abstract readHistory(
    orderId: string,
    afterSeq: number,
  ): Promise<OrderStatusChanged[] | undefined>;
}
