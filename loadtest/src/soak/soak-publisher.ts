import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { authMetadata, orderStatusClientCtor } from '../clients/grpc-connector';
import type { ServiceEndpoints } from '../service/launcher';

/** How often the pacer looks at what is due. */
const TICK_MS = 100;
/** Publishes awaiting an answer at most: a slow service makes the pacer fall behind, not pile up. */
export const MAX_IN_FLIGHT = 64;
export const PUBLISH_TIMEOUT_MS = 5_000;
/** Attempts per publish: a failed one is retried with the same idempotency key. */
export const PUBLISH_ATTEMPTS = 3;
export const PUBLISH_RETRY_DELAY_MS = 200;

export type PublishRoute = 'rest' | 'grpc';

interface Tracking {
  readonly location: { readonly lat: number; readonly lon: number };
  readonly etaMs: number;
}

export interface PublishCounts {
  readonly ok: number;
  /** Publishes that failed every attempt. */
  readonly failed: number;
  /** Attempts after a failure (same idempotency key). */
  readonly retried: number;
}

/**
 * Tracking updates of `orderIds`, `perSec` in total, alternating the REST route
 * (`POST /v1/orders/:id/tracking`) and gRPC `UpdateTracking`, each with an idempotency key
 * so that a failed attempt is retried as the API documents (the service answers a retry
 * of a publish that did happen with the same event: no second one), which also keeps the
 * service's idempotency cache in use. Paced against the clock and bounded in flight;
 * retries and final failures are counted per route.
 */
export class SoakPublisher {
  readonly counts: Record<PublishRoute, { ok: number; failed: number; retried: number }> = {
    rest: { ok: 0, failed: 0, retried: 0 },
    grpc: { ok: 0, failed: 0, retried: 0 },
  };
  private readonly client: grpc.Client;
  private readonly base: string;
  private timer?: NodeJS.Timeout;
  private sent = 0;
  private inFlight = 0;
  private startedAt = 0;
  private readonly lastErrors: string[] = [];

  constructor(
    service: ServiceEndpoints,
    private readonly token: string | undefined,
    private readonly orderIds: readonly string[],
  ) {
    this.base = `http://${service.host}:${service.httpPort}`;
    const Ctor = orderStatusClientCtor();
    this.client = new Ctor(
      `${service.host}:${service.grpcPort}`,
      grpc.credentials.createInsecure(),
    );
  }

  get published(): number {
    return this.counts.rest.ok + this.counts.grpc.ok;
  }

  /** The last few failure messages (what went wrong, for the report's error line). */
  get errors(): readonly string[] {
    return this.lastErrors;
  }

  start(perSec: number): void {
    this.startedAt = performance.now();
    this.timer = setInterval(() => {
      const due = Math.floor(((performance.now() - this.startedAt) / 1000) * perSec);
      while (this.sent < due && this.inFlight < MAX_IN_FLIGHT) this.publishOne();
    }, TICK_MS);
  }

  /** Stops pacing and waits (bounded) for the publishes in flight to be answered. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    const until = performance.now() + PUBLISH_TIMEOUT_MS;
    while (this.inFlight > 0 && performance.now() < until) {
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  close(): void {
    clearInterval(this.timer);
    this.client.close();
  }

  private publishOne(): void {
    const orderId = this.orderIds[this.sent % this.orderIds.length];
    const route: PublishRoute = this.sent % 2 === 0 ? 'rest' : 'grpc';
    this.sent += 1;
    this.inFlight += 1;
    const update = { location: { lat: 52.52, lon: 13.405 }, etaMs: Date.now() + 600_000 };
    void this.attempt(route, orderId, update, randomUUID()).finally(() => (this.inFlight -= 1));
  }

  private async attempt(
    route: PublishRoute,
    orderId: string,
    update: Tracking,
    key: string,
  ): Promise<void> {
    for (let n = 1; ; n += 1) {
      try {
        await (route === 'rest'
          ? this.viaRest(orderId, update, key)
          : this.viaGrpc(orderId, update, key));
        this.counts[route].ok += 1;
        return;
      } catch (err) {
        this.lastErrors.push(`${route}: ${err instanceof Error ? err.message : String(err)}`);
        if (this.lastErrors.length > 5) this.lastErrors.shift();
        if (n >= PUBLISH_ATTEMPTS) {
          this.counts[route].failed += 1;
          return;
        }
        this.counts[route].retried += 1;
        await new Promise((r) => setTimeout(r, PUBLISH_RETRY_DELAY_MS));
      }
    }
  }

  private async viaRest(orderId: string, update: Tracking, key: string): Promise<void> {
    const res = await fetch(`${this.base}/v1/orders/${encodeURIComponent(orderId)}/tracking`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'idempotency-key': key,
        ...(this.token === undefined ? {} : { authorization: `Bearer ${this.token}` }),
      },
      body: JSON.stringify(update),
      signal: AbortSignal.timeout(PUBLISH_TIMEOUT_MS),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`HTTP ${res.status} ${text.slice(0, 200)}`);
  }

  private viaGrpc(orderId: string, update: Tracking, key: string): Promise<void> {
    const method = orderStatusClientCtor().service.UpdateTracking;
    return new Promise((resolve, reject) => {
      this.client.makeUnaryRequest(
        method.path,
        method.requestSerialize,
        method.responseDeserialize,
        { orderId, ...update, requestId: key },
        authMetadata(this.token),
        { deadline: Date.now() + PUBLISH_TIMEOUT_MS },
        (err) => (err ? reject(err) : resolve()),
      );
    });
  }
}
