import type { TransportName } from '../clients/transport';
import type { ScenarioOptions } from '../scenarios/scenario';

/** The transports issue 35 names for the soak: one of each kind. */
export const SOAK_TRANSPORTS: readonly TransportName[] = ['grpc', 'sse', 'ws', 'longpoll'];
export const DEFAULT_SOAK_SUBSCRIBERS = 2_000;
export const DEFAULT_SOAK_ORDERS = 200;
export const DEFAULT_SOAK_DURATION_S = 3_600;
/** Tracking updates per order per second: 100 publishes/s, 1,000 deliveries/s at the defaults. */
export const DEFAULT_SOAK_RATE_PER_ORDER = 0.5;
/** The memory slope is fitted over this last stretch: the first 20 minutes are warm-up. */
export const SOAK_SLOPE_WINDOW_S = 2_400;
/** Each subscriber resumes after this many reconnects at most (bounds a dead service's spin). */
export const SOAK_MAX_RECONNECTS = 10_000;
/**
 * Bound on waiting, after publishing stops, for every subscriber to reach its order's last
 * seq: on a shared host the service may be minutes into a backlog of reconnects then.
 */
export const SOAK_DRAIN_TIMEOUT_MS = 30_000;
/** One subscriber in this many records latency (every one counts its seqs). */
export const SOAK_LATENCY_STRIDE = 10;
/** Subscribers dropped by the client at each drop: one in this many. */
export const SOAK_DROP_ONE_IN = 10;

/** Everything a soak run's clock does, in seconds. */
export interface SoakPlan {
  readonly subscribers: number;
  readonly orders: number;
  readonly durationS: number;
  readonly ratePerOrder: number;
  /** Memory, CPU and event-loop readings. */
  readonly sampleEveryS: number;
  /** A tenth of the subscribers dropped by the client and resumed. */
  readonly dropEveryS: number;
  /** Lifetime of the subscribers' tokens; renewed every half of it. */
  readonly tokenTtlS: number;
  readonly slopeWindowS: number;
  /** The service's churn: stream and gRPC connection maximum ages. */
  readonly env: Readonly<Record<string, string>>;
}

/** The service's environment of a full soak: streams end every 2-2.5 min, gRPC connections at 90 s. */
const FULL_ENV = {
  STREAM_MAX_AGE_MS: '120000',
  STREAM_MAX_AGE_JITTER_MS: '30000',
  GRPC_MAX_CONNECTION_AGE_MS: '90000',
  GRPC_MAX_CONNECTION_AGE_GRACE_MS: '15000',
  // One publisher principal publishes for all 200 orders (the default is 100 a second).
  LIMIT_PUBLISH_PER_WINDOW: '100000',
};

/** The CI version: a minute, every churn several times over. */
const TINY_ENV = {
  ...FULL_ENV,
  STREAM_MAX_AGE_MS: '15000',
  STREAM_MAX_AGE_JITTER_MS: '5000',
  GRPC_MAX_CONNECTION_AGE_MS: '20000',
  GRPC_MAX_CONNECTION_AGE_GRACE_MS: '5000',
};

export function soakPlan(o: ScenarioOptions): SoakPlan {
  const durationS = o.durationS ?? (o.tiny ? 60 : DEFAULT_SOAK_DURATION_S);
  // Readings and drops every minute; at CI's minute, every 10 s so the slope has points.
  const everyS = durationS >= 600 ? 60 : 10;
  return {
    subscribers: o.subscribers ?? (o.tiny ? 40 : DEFAULT_SOAK_SUBSCRIBERS),
    orders: o.orders?.[0] ?? (o.tiny ? 10 : DEFAULT_SOAK_ORDERS),
    durationS,
    ratePerOrder: o.rate ?? (o.tiny ? 2 : DEFAULT_SOAK_RATE_PER_ORDER),
    sampleEveryS: everyS,
    dropEveryS: everyS,
    tokenTtlS: durationS >= 600 ? 600 : 20,
    slopeWindowS: SOAK_SLOPE_WINDOW_S,
    env: durationS >= 600 ? FULL_ENV : TINY_ENV,
  };
}
