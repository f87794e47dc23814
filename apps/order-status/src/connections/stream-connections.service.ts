import { Inject, Injectable } from '@nestjs/common';
import type { Principal } from '@app/auth';
import { StreamEventBus, type BusSubscription, type DeliverySink } from '@app/event-bus';
import { AuthService } from '../auth/auth.service';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { DrainGate } from './drain-gate';
import {
  StreamLifecycle,
  type ConnectionPort,
  type StreamContext,
  type StreamHandle,
  type StreamPlan,
} from './stream-lifecycle';

/** One order's bus subscription over one connection (SSE stream, gRPC Subscribe). */
export interface BusStreamSpec {
  readonly transport: string;
  readonly principal: Principal;
  readonly orderId: string;
  readonly afterSeq: number;
  readonly port: ConnectionPort;
  /** The transport's writer; `ctx.ended()` once it has written the stream's end. */
  sink(ctx: StreamContext): DeliverySink;
}

/** What a transport supplies for a connection that is not a plain bus stream (long-poll). */
export type KeyedStreamSpec<H extends StreamHandle> = Omit<
  StreamPlan<H>,
  'authorize' | 'acquireSlot'
> & {
  readonly principal: Principal;
  readonly orderId: string;
};

/**
 * The one connection life cycle (stream-lifecycle.ts) bound to this service's parts: the
 * bus's connection gauge, per-order authorization and per-principal connection slots
 * (AuthService), the configured end grace period. Every transport opens its
 * connections here; none repeats the sequence.
 */
@Injectable()
export class StreamConnections {
  constructor(
    @Inject(StreamEventBus) private readonly bus: StreamEventBus,
    @Inject(AuthService) private readonly auth: AuthService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(DrainGate) private readonly drain: DrainGate,
  ) {}

  /**
   * Any connection: the transport supplies every step (socket.io: one per socket). While
   * the instance drains, the stream does not open: the connection fails with the drain
   * gate's `unavailable` and reconnect advice (checked last, so a connection whose
   * authorization was still running when the drain began is turned away too).
   */
  lifecycle<H extends StreamHandle>(plan: StreamPlan<H>): StreamLifecycle<H> {
    const open = (ctx: StreamContext): Promise<H> => {
      this.drain.assertOpen();
      return plan.open(ctx);
    };
    return new StreamLifecycle(
      { ...plan, open },
      {
        gauge: this.bus.stats,
        deadlines: this.bus.deadlines,
        endGraceMs: this.config.streamEndGraceMs,
      },
    );
  }

  /** A connection serving one order: authorized for it and holding one of the principal's slots. */
  forStream<H extends StreamHandle>(spec: KeyedStreamSpec<H>): StreamLifecycle<H> {
    return this.lifecycle({
      transport: spec.transport,
      port: spec.port,
      authorize: () => this.auth.authorizeSubscribe(spec.principal, spec.orderId, spec.transport),
      acquireSlot: () => this.auth.acquireConnection(spec.principal),
      open: (ctx) => spec.open(ctx),
    });
  }

  /**
   * A connection streaming one order from the bus: replay after `afterSeq`, then live
   * events, ending with `token_expired` when the principal's credentials do.
   */
  busStream(spec: BusStreamSpec): StreamLifecycle<BusSubscription> {
    return this.forStream({
      transport: spec.transport,
      principal: spec.principal,
      orderId: spec.orderId,
      port: spec.port,
      open: (ctx) =>
        this.bus.open(spec.orderId, spec.afterSeq, spec.sink(ctx), {
          transport: spec.transport,
          expiresAtMs: spec.principal.expiresAtMs,
        }),
    });
  }
}
