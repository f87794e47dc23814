import { OrderStatus, type Tracking } from '@app/order-domain';

/**
 * What a simulated order does and when: the demo's believable life cycle, and the steady
 * schedule's tracking updates. Pure functions of the order number and the clock, so the
 * simulator stays about timing and the specs can check the plan on its own.
 */

/**
 * Mean time an order stays in each status before it moves on, in ms: a quick checkout, a
 * warehouse that takes a little longer, and most of the time on the road. Each order
 * draws its own dwell within ±50 % of the mean, so orders created together drift apart.
 */
export const DWELL_MS: Readonly<Partial<Record<OrderStatus, number>>> = {
  [OrderStatus.Created]: 4_000,
  [OrderStatus.Paid]: 6_000,
  [OrderStatus.Packed]: 8_000,
  [OrderStatus.Shipped]: 20_000,
  [OrderStatus.OutForDelivery]: 12_000,
};

/** A dwell time for `status`, random within ±50 % of its mean. */
export function dwellMs(status: OrderStatus, random: () => number = Math.random): number {
  const mean = DWELL_MS[status] ?? 0;
  return Math.round(mean * (0.5 + random()));
}

/** The status after `status` in a life cycle that is not cancelled (undefined: finished). */
export function lifecycleNext(status: OrderStatus): OrderStatus | undefined {
  switch (status) {
    case OrderStatus.Created:
      return OrderStatus.Paid;
    case OrderStatus.Paid:
      return OrderStatus.Packed;
    case OrderStatus.Packed:
      return OrderStatus.Shipped;
    case OrderStatus.Shipped:
      return OrderStatus.OutForDelivery;
    case OrderStatus.OutForDelivery:
      return OrderStatus.Delivered;
    default:
      return undefined;
  }
}

/** Where, and why, an order is cancelled instead of moving on. */
export interface Cancellation {
  /** The status it is cancelled in (it never gets further). */
  readonly at: OrderStatus;
  readonly reason: string;
}

const CANCELLATIONS: readonly Cancellation[] = [
  { at: OrderStatus.Created, reason: 'payment declined' },
  { at: OrderStatus.Paid, reason: 'cancelled by the customer' },
  { at: OrderStatus.Packed, reason: 'item out of stock' },
];

/** Every tenth order is cancelled, at one of three points before it ships. */
export function cancellationOf(n: number): Cancellation | undefined {
  if (n % 10 !== 0) return undefined;
  return CANCELLATIONS[(n / 10) % CANCELLATIONS.length];
}

/** A delivery run: from a depot to the customer, between two times. */
export interface Route {
  readonly from: { readonly lat: number; readonly lon: number };
  readonly to: { readonly lat: number; readonly lon: number };
  readonly startMs: number;
  /** The planned delivery time: the ETA every tracking update carries. */
  readonly etaMs: number;
}

/** Depot in Berlin; customers spread over ~20 km around it. */
const DEPOT = { lat: 52.52, lon: 13.405 };
const SPREAD_DEG = 0.18;

/** Coordinates to 5 decimals (about 1 m): what a GPS fix is worth, and shorter JSON. */
function round5(x: number): number {
  return Math.round(x * 1e5) / 1e5;
}

/** Order n's route: a fixed customer address per order number, so reruns look the same. */
export function routeOf(n: number, startMs: number, etaMs: number): Route {
  // A cheap, well-spread pseudo-random pair from n (the golden-ratio sequence).
  const u = (n * 0.6180339887) % 1;
  const v = (n * 0.7548776662) % 1;
  return {
    from: DEPOT,
    to: {
      lat: round5(DEPOT.lat + (u - 0.5) * SPREAD_DEG),
      lon: round5(DEPOT.lon + (v - 0.5) * SPREAD_DEG),
    },
    startMs,
    etaMs,
  };
}

/** The position on `route` at `nowMs` (straight line, constant speed) and its ETA. */
export function trackingOnRoute(route: Route, nowMs: number): Tracking {
  const span = Math.max(1, route.etaMs - route.startMs);
  const f = Math.min(1, Math.max(0, (nowMs - route.startMs) / span));
  return {
    location: {
      lat: round5(route.from.lat + (route.to.lat - route.from.lat) * f),
      lon: round5(route.from.lon + (route.to.lon - route.from.lon) * f),
    },
    etaMs: route.etaMs,
  };
}

/** @default 600_000 ms: the steady schedule's ETA, always ten minutes ahead */
export const STEADY_ETA_AHEAD_MS = 600_000;

/**
 * The steady schedule's `step`-th tracking update of an order: a position that moves by
 * about 10 m per step around the depot and an ETA ten minutes ahead. The load test's bare
 * server (loadtest/src/bare-server/order-log.ts) writes the same values, so both servers put
 * the same bytes on the wire.
 */
export function steadyTracking(step: number, nowMs: number): Tracking {
  const k = step % 1000;
  return {
    location: { lat: round5(DEPOT.lat + k * 1e-4), lon: round5(DEPOT.lon + k * 1e-4) },
    etaMs: nowMs + STEADY_ETA_AHEAD_MS,
  };
}
