import { OrderStatus } from '@app/order-domain/order-status';
import type { StreamItem } from '@app/order-domain/order-events';
import type { ConnectionEvent, OrderWatch, TransportName, WatchItem } from '@app/client/node';
import type { TestApp } from '../support/test-app';
import { publishTracking } from '@app/order-domain';

export const ALL_TRANSPORTS: readonly TransportName[] = [
  'sse',
  'ws',
  'websocket',
  'longpoll',
  'grpc',
];

/** Where a transport connects: the gRPC listener or the HTTP base URL. */
export function baseUrlFor(app: TestApp, transport: TransportName): string {
  return transport === 'grpc' ? app.grpcAddress : app.httpUrl;
}

/** A watch's items and connection events, collected while it runs. */
export interface Recorded {
  readonly items: WatchItem[];
  readonly connection: { at: number; e: ConnectionEvent }[];
  /** Resolves once the watch ended (its iteration is over). */
  readonly finished: Promise<void>;
  /** Seqs of delivered events and tracking updates, in order. */
  seqs(): number[];
  kinds(kind: WatchItem['kind']): WatchItem[];
}

/** Iterates `watch` in the background; `connection` must be the watch's onConnection log. */
export function record(watch: OrderWatch, connection: Recorded['connection']): Recorded {
  const items: WatchItem[] = [];
  const finished = (async () => {
    for await (const item of watch) items.push(item);
  })();
  return {
    items,
    connection,
    finished,
    seqs: () =>
      items.flatMap((i) =>
        i.kind === 'event' ? [i.event.seq] : i.kind === 'tracking' ? [i.tracking.seq] : [],
      ),
    kinds: (kind) => items.filter((i) => i.kind === kind),
  };
}

/** Closes every watch in `watches` (emptying it) and waits until each has ended. */
export async function closeWatches(watches: OrderWatch[]): Promise<void> {
  for (const w of watches.splice(0)) {
    w.close();
    await w.done;
  }
}

/** An onConnection callback that logs into `log` with a timestamp. */
export function connectionLog(log: Recorded['connection']): (e: ConnectionEvent) => void {
  return (e) => log.push({ at: performance.now(), e });
}

/** created → paid → packed → shipped: seqs 1..4, and the order accepts tracking updates. */
export async function shippedOrder(app: TestApp, orderId: string, ownerId?: string): Promise<void> {
  if (ownerId === undefined) await app.publish(orderId, OrderStatus.Created);
  else await app.createOwnedOrder(orderId, ownerId);
  for (const s of [OrderStatus.Paid, OrderStatus.Packed, OrderStatus.Shipped]) {
    await app.publish(orderId, s);
  }
}

/** One tracking update (the order must be shipped or out for delivery); its seq. */
export async function track(app: TestApp, orderId: string): Promise<number> {
  const t = await publishTracking(app.store, {
    orderId,
    location: { lat: 52.37, lon: 4.89 },
    etaMs: Date.now() + 3_600_000,
  });
  return t.seq;
}

/**
 * Tracking updates every 50 ms for `forMs` (past the expiry of the 2-second tokens the
 * token-expiry tests mint), then the order is delivered, which completes the watch.
 * Returns the seq of the last tracking update; `delivered` is the one after it.
 */
export async function trackThenDeliver(
  app: TestApp,
  orderId: string,
  forMs = 3_200,
): Promise<number> {
  const deadline = performance.now() + forMs;
  let last = 4;
  while (performance.now() < deadline) {
    last = await track(app, orderId);
    await new Promise((r) => setTimeout(r, 50));
  }
  await app.publish(orderId, OrderStatus.Delivered);
  return last;
}

/** The seq an event or tracking item carries (none for the other kinds). */
export function seqOf(item: WatchItem): number | undefined {
  return item.kind === 'event'
    ? item.event.seq
    : item.kind === 'tracking'
      ? item.tracking.seq
      : undefined;
}

/** Streams the service holds open, every transport (long-poll: held polls). */
export function openStreams(app: TestApp): number {
  let n = 0;
  for (const v of app.bus.stats.connectionsByTransport.values()) n += v;
  return n;
}

export function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

export type { StreamItem };
