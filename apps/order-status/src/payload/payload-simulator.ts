import { Inject, Injectable, Optional, type OnApplicationShutdown } from '@nestjs/common';
import {
  publishPayload,
  publishPayloadSync,
  type PayloadCommand,
  type PayloadEvent,
  type PayloadSnapshot,
} from '@app/payload-domain';
import { StreamStore } from '@app/store';
import { DEFAULT_SIMULATOR_CUSTOMERS, simulatedOwner } from '../simulator/simulator';
import { SimulatorClock, type SimulatorState } from '../simulator/simulator-clock';
import { OrderTracing } from '../tracing/order-tracing';

/** The load test's steady schedule in the payload domain: which streams, how fast, how big. */
export interface PayloadSchedule {
  /** Streams publishing at once (`${prefix}-1` ...). */
  readonly orders: number;
  /** Payload events per second per stream, exactly. */
  readonly ratePerOrder: number;
  /** Bytes of payload per event. */
  readonly payloadBytes: number;
  /** @default 'order' */
  readonly prefix?: string;
  /** Stop after this many ms of running (0: until stopped). @default 0 */
  readonly durationMs?: number;
}

export interface PayloadSimulatorStatus {
  readonly state: SimulatorState;
  readonly schedule?: PayloadSchedule;
  readonly published: number;
  readonly failed: number;
  readonly startedAtUs?: number;
}

/**
 * The order simulator's steady schedule (`lifecycle: false`) for the payload domain, in
 * process as that one is, so a payload-size run costs the service what an order run
 * does and no publish request per event: `prepare()` publishes each stream's first
 * payload (seq 1), `start()` publishes at exactly orders x ratePerOrder, round robin
 * over the streams, a late tick catching up.
 */
@Injectable()
export class PayloadSimulator extends SimulatorClock implements OnApplicationShutdown {
  private schedule?: Required<PayloadSchedule>;
  private ids: string[] = [];
  private cursor = 0;
  /** The store's synchronous publish, made once: no closure per event. */
  private readonly payloadSync = (cmd: PayloadCommand): PayloadEvent =>
    publishPayloadSync(this.store, cmd);

  constructor(
    @Inject(StreamStore) private readonly store: StreamStore<PayloadEvent, PayloadSnapshot>,
    /** With tracing on: each synchronous publish is a root `publish` span (sampled). */
    @Optional() @Inject(OrderTracing) tracing?: OrderTracing,
  ) {
    super(tracing);
  }

  status(): PayloadSimulatorStatus {
    return {
      state: this.state,
      schedule: this.schedule,
      published: this.published,
      failed: this.failed,
      ...(this.state === 'running' ? { startedAtUs: Math.round(this.startedAtMs * 1000) } : {}),
    };
  }

  /** Stops any current run and publishes each stream's first payload. */
  async prepare(schedule: PayloadSchedule): Promise<PayloadSimulatorStatus> {
    this.stop();
    const s = { prefix: 'order', durationMs: 0, ...schedule };
    this.schedule = s;
    this.published = 0;
    this.failed = 0;
    this.ids = Array.from({ length: s.orders }, (_, i) => `${s.prefix}-${i + 1}`);
    await Promise.all(
      this.ids.map((orderId, i) =>
        this.counted(() =>
          publishPayload(this.store, {
            orderId,
            bytes: s.payloadBytes,
            ownerId: simulatedOwner(i + 1, DEFAULT_SIMULATOR_CUSTOMERS),
          }),
        ),
      ),
    );
    this.state = 'ready';
    return this.status();
  }

  start(): PayloadSimulatorStatus {
    if (this.schedule && this.startClock(this.schedule.durationMs)) this.cursor = 0;
    return this.status();
  }

  stop(): PayloadSimulatorStatus {
    this.stopClock();
    return this.status();
  }

  onApplicationShutdown(): void {
    this.stop();
  }

  protected tick(elapsedMs: number): void {
    const s = this.schedule;
    if (!s) return;
    const n = this.dueNow(elapsedMs, s.ratePerOrder, s.orders);
    for (let i = 0; i < n; i++) {
      const orderId = this.ids[this.cursor];
      this.cursor = (this.cursor + 1) % this.ids.length;
      this.publish(orderId, s.payloadBytes);
    }
  }

  /** One payload, synchronously when the store can (no promise per event). */
  private publish(orderId: string, bytes: number): void {
    if (this.store.appendSync === undefined) {
      void this.counted(() => publishPayload(this.store, { orderId, bytes }));
      return;
    }
    this.publishSync('payload', { orderId, bytes }, this.payloadSync);
  }
}
