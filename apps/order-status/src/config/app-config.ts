import {
  DEFAULT_CHANNEL_IDLE_MS,
  DEFAULT_IDEMPOTENCY_WINDOW_MS,
  DEFAULT_MAX_STREAM_AGE_JITTER_MS,
  DEFAULT_MAX_STREAM_AGE_MS,
  DEFAULT_OVERFLOW_POLICY,
  DEFAULT_QUEUE_CAPACITY,
  DEFAULT_RING_MAX_AGE_MS,
  DEFAULT_RING_SIZE,
  OVERFLOW_POLICIES,
  type OverflowPolicy,
} from '@app/event-bus';
import {
  DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
  DEFAULT_REDIS_CONNECT_TIMEOUT_MS,
  DEFAULT_REDIS_HISTORY_SIZE,
  DEFAULT_REDIS_KEY_PREFIX,
  DEFAULT_REDIS_RECONNECT_MAX_DELAY_MS,
} from '@app/redis-store';
import {
  readAuthConfig,
  readLimitsConfig,
  type AuthConfig,
  type LimitsConfig,
} from './auth-config';
import { DEFAULT_STREAM_END_GRACE_MS } from '../connections/stream-lifecycle';
import { EnvReader, type Env } from './env-schema';

/**
 * Every setting of the service, read once from the environment at start-up. The README's
 * configuration table lists the same variables, defaults and ranges.
 */
export interface AppConfig {
  readonly host: string;
  /** Plain HTTP/1.1 (0: any free port). */
  readonly httpPort: number;
  /** TLS with ALPN h2 and http/1.1 (0: any free port; -1: disabled). */
  readonly httpsPort: number;
  readonly grpcPort: number;
  readonly tls: {
    readonly certFile?: string;
    readonly keyFile?: string;
    readonly devCertDir: string;
  };
  readonly http: {
    readonly headersTimeoutMs: number;
    readonly requestTimeoutMs: number;
    readonly keepAliveTimeoutMs: number;
    readonly h2SessionTimeoutMs: number;
    /**
     * Time a TLS connection gets to complete its handshake (a socket that never sends a
     * ClientHello is closed then).
     * @default 10_000 ms (DEFAULT_TLS_HANDSHAKE_TIMEOUT_MS)
     */
    readonly tlsHandshakeTimeoutMs: number;
    readonly bodyLimitBytes: number;
  };
  readonly bus: {
    readonly ringSize: number;
    readonly ringMaxAgeMs: number;
    readonly queueCapacity: number;
    readonly overflowPolicy: OverflowPolicy;
    readonly maxStreamAgeMs: number;
    readonly maxStreamAgeJitterMs: number;
    readonly channelIdleMs: number;
  };
  readonly simulator: {
    readonly enabled: boolean;
    readonly orders: number;
    readonly ratePerOrder: number;
    readonly paddingBytes: number;
    readonly eventsPerStatus: number;
  };
  readonly adminEnabled: boolean;
  /**
   * How long a connection whose stream has ended (end frame, final answer, status) gets
   * to take its last bytes before it is destroyed: bounds a client that stopped reading.
   */
  readonly streamEndGraceMs: number;
  readonly sse: { readonly heartbeatMs: number; readonly retryMs: number };
  readonly longPoll: {
    readonly defaultWaitS: number;
    readonly maxWaitS: number;
    readonly maxBatch: number;
  };
  readonly grpc: {
    readonly keepaliveTimeMs: number;
    readonly keepaliveTimeoutMs: number;
    readonly keepalivePermitWithoutCalls: boolean;
    readonly minPingIntervalMs: number;
    readonly maxConnectionAgeMs: number;
    readonly maxConnectionAgeGraceMs: number;
    readonly maxReceiveMessageBytes: number;
  };
  readonly ws: {
    readonly pingIntervalMs: number;
    readonly pingTimeoutMs: number;
    readonly maxHttpBufferBytes: number;
    readonly corsOrigins: readonly string[];
  };
  readonly logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** Graceful shutdown on SIGTERM (see ops/graceful-shutdown.ts). */
  readonly shutdown: {
    /** Longest wait for clients to leave after the reconnect advice, before closing. */
    readonly drainMs: number;
    /** Reconnect delays advised to clients are spread over this many ms. */
    readonly reconnectJitterMs: number;
  };
  /** Token verification, stream tickets, cookie, HTTP CORS (see auth-config.ts). */
  readonly auth: AuthConfig;
  readonly limits: LimitsConfig;
  /**
   * How long the store remembers a publish's idempotency key (HTTP `Idempotency-Key`,
   * gRPC `request_id`): a retry within it answers the first publish's event.
   */
  readonly idempotencyWindowMs: number;
  /** The shared Redis store; undefined (embedded in-memory store) unless REDIS_URL or REDIS_CLUSTER_NODES is set. */
  readonly redis?: RedisConfig;
}

export interface RedisConfig {
  readonly url?: string;
  readonly clusterNodes: readonly string[];
  readonly keyPrefix: string;
  readonly historySize: number;
  readonly commandTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly reconnectMaxDelayMs: number;
  /** The same as AppConfig.idempotencyWindowMs (the Redis store keeps the keys). */
  readonly idempotencyWindowMs: number;
}

const MAX_PORT = 65_535;
/** @default 10_000 ms for a TLS handshake (Node's own default is 120 s) */
export const DEFAULT_TLS_HANDSHAKE_TIMEOUT_MS = 10_000;
const HOUR_MS = 3_600_000;

/** Reads and validates the configuration; throws ConfigError naming every bad variable. */
export function loadConfig(env: Env = process.env): AppConfig {
  const r = new EnvReader(env);
  const idempotencyWindowMs = r.int(
    'IDEMPOTENCY_WINDOW_MS',
    DEFAULT_IDEMPOTENCY_WINDOW_MS,
    1_000,
    24 * HOUR_MS,
  );
  const config: AppConfig = {
    host: r.str('HOST', '127.0.0.1'),
    httpPort: r.int('HTTP_PORT', 3000, 0, MAX_PORT),
    httpsPort: r.int('HTTPS_PORT', 3443, -1, MAX_PORT),
    grpcPort: r.int('GRPC_PORT', 50051, 0, MAX_PORT),
    tls: {
      certFile: r.optional('TLS_CERT_FILE'),
      keyFile: r.optional('TLS_KEY_FILE'),
      devCertDir: r.str('TLS_DEV_CERT_DIR', '.certs'),
    },
    http: {
      headersTimeoutMs: r.int('HTTP_HEADERS_TIMEOUT_MS', 10_000, 1_000, 120_000),
      requestTimeoutMs: r.int('HTTP_REQUEST_TIMEOUT_MS', 30_000, 1_000, 600_000),
      keepAliveTimeoutMs: r.int('HTTP_KEEPALIVE_TIMEOUT_MS', 65_000, 1_000, 600_000),
      h2SessionTimeoutMs: r.int('HTTP2_SESSION_TIMEOUT_MS', 120_000, 1_000, HOUR_MS),
      tlsHandshakeTimeoutMs: r.int(
        'HTTP_TLS_HANDSHAKE_TIMEOUT_MS',
        DEFAULT_TLS_HANDSHAKE_TIMEOUT_MS,
        1_000,
        120_000,
      ),
      bodyLimitBytes: r.int('HTTP_BODY_LIMIT_BYTES', 16_384, 256, 1_048_576),
    },
    bus: {
      ringSize: r.int('BUS_RING_SIZE', DEFAULT_RING_SIZE, 1, 100_000),
      ringMaxAgeMs: r.int('BUS_RING_MAX_AGE_MS', DEFAULT_RING_MAX_AGE_MS, 1_000, 24 * HOUR_MS),
      queueCapacity: r.int('BUS_QUEUE_CAPACITY', DEFAULT_QUEUE_CAPACITY, 1, 100_000),
      overflowPolicy: r.oneOf('BUS_OVERFLOW_POLICY', DEFAULT_OVERFLOW_POLICY, OVERFLOW_POLICIES),
      maxStreamAgeMs: r.int('STREAM_MAX_AGE_MS', DEFAULT_MAX_STREAM_AGE_MS, 0, 24 * HOUR_MS),
      maxStreamAgeJitterMs: r.int(
        'STREAM_MAX_AGE_JITTER_MS',
        DEFAULT_MAX_STREAM_AGE_JITTER_MS,
        0,
        HOUR_MS,
      ),
      channelIdleMs: r.int('BUS_CHANNEL_IDLE_MS', DEFAULT_CHANNEL_IDLE_MS, 0, HOUR_MS),
    },
    simulator: {
      enabled: r.bool('SIMULATOR_ENABLED', true),
      orders: r.int('SIMULATOR_ORDERS', 20, 1, 100_000),
      ratePerOrder: r.num('SIMULATOR_RATE', 0.5, 0.001, 1_000),
      paddingBytes: r.int('SIMULATOR_PADDING_BYTES', 0, 0, 65_536),
      eventsPerStatus: r.int('SIMULATOR_EVENTS_PER_STATUS', 10, 1, 1_000_000),
    },
    adminEnabled: r.bool('ADMIN_ENABLED', true),
    streamEndGraceMs: r.int('STREAM_END_GRACE_MS', DEFAULT_STREAM_END_GRACE_MS, 100, 60_000),
    sse: {
      heartbeatMs: r.int('SSE_HEARTBEAT_MS', 15_000, 1_000, 300_000),
      retryMs: r.int('SSE_RETRY_MS', 2_000, 100, 60_000),
    },
    longPoll: {
      defaultWaitS: r.int('LONG_POLL_DEFAULT_WAIT_S', 30, 0, 300),
      maxWaitS: r.int('LONG_POLL_MAX_WAIT_S', 60, 0, 300),
      maxBatch: r.int('LONG_POLL_MAX_BATCH', 100, 1, 10_000),
    },
    grpc: {
      keepaliveTimeMs: r.int('GRPC_KEEPALIVE_TIME_MS', 30_000, 1_000, HOUR_MS),
      keepaliveTimeoutMs: r.int('GRPC_KEEPALIVE_TIMEOUT_MS', 10_000, 1_000, HOUR_MS),
      keepalivePermitWithoutCalls: r.bool('GRPC_KEEPALIVE_PERMIT_WITHOUT_CALLS', true),
      minPingIntervalMs: r.int('GRPC_MIN_PING_INTERVAL_MS', 10_000, 1_000, HOUR_MS),
      maxConnectionAgeMs: r.int('GRPC_MAX_CONNECTION_AGE_MS', 600_000, 1_000, 24 * HOUR_MS),
      maxConnectionAgeGraceMs: r.int('GRPC_MAX_CONNECTION_AGE_GRACE_MS', 30_000, 0, HOUR_MS),
      maxReceiveMessageBytes: r.int('GRPC_MAX_RECEIVE_BYTES', 65_536, 1_024, 4_194_304),
    },
    ws: {
      pingIntervalMs: r.int('WS_PING_INTERVAL_MS', 25_000, 1_000, 600_000),
      pingTimeoutMs: r.int('WS_PING_TIMEOUT_MS', 20_000, 1_000, 600_000),
      maxHttpBufferBytes: r.int('WS_MAX_HTTP_BUFFER_BYTES', 16_384, 256, 1_048_576),
      corsOrigins: r.list('WS_CORS_ORIGINS', ['http://localhost:3000', 'https://localhost:3443']),
    },
    logLevel: r.oneOf('LOG_LEVEL', 'info', ['debug', 'info', 'warn', 'error', 'silent']),
    shutdown: {
      drainMs: r.int('SHUTDOWN_DRAIN_MS', 10_000, 0, 300_000),
      reconnectJitterMs: r.int('SHUTDOWN_RECONNECT_JITTER_MS', 5_000, 0, 300_000),
    },
    idempotencyWindowMs,
    redis: readRedisConfig(r, idempotencyWindowMs),
    auth: readAuthConfig(r),
    limits: readLimitsConfig(r),
  };
  if (config.longPoll.defaultWaitS > config.longPoll.maxWaitS) {
    r.problems.push(
      `LONG_POLL_DEFAULT_WAIT_S=${config.longPoll.defaultWaitS} must not exceed LONG_POLL_MAX_WAIT_S=${config.longPoll.maxWaitS}`,
    );
  }
  r.assertValid();
  return config;
}

/** REDIS_* variables; the Redis store is used only when REDIS_URL or REDIS_CLUSTER_NODES is set. */
function readRedisConfig(r: EnvReader, idempotencyWindowMs: number): RedisConfig | undefined {
  const url = r.optional('REDIS_URL');
  const clusterNodes = r.list('REDIS_CLUSTER_NODES', []);
  if (url !== undefined && !/^rediss?:\/\/\S+$/.test(url)) {
    r.problems.push(
      `REDIS_URL=${JSON.stringify(url)}: must be redis://host:port or rediss://host:port`,
    );
  }
  for (const node of clusterNodes) {
    if (!/^(\[[^\]]+\]|[^:\s]+):\d{1,5}$/.test(node)) {
      r.problems.push(`REDIS_CLUSTER_NODES: ${JSON.stringify(node)} must be host:port`);
    }
  }
  const config: RedisConfig = {
    url,
    clusterNodes,
    keyPrefix: r.str('REDIS_KEY_PREFIX', DEFAULT_REDIS_KEY_PREFIX),
    historySize: r.int('REDIS_HISTORY_SIZE', DEFAULT_REDIS_HISTORY_SIZE, 1, 100_000),
    commandTimeoutMs: r.int(
      'REDIS_COMMAND_TIMEOUT_MS',
      DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
      50,
      60_000,
    ),
    connectTimeoutMs: r.int(
      'REDIS_CONNECT_TIMEOUT_MS',
      DEFAULT_REDIS_CONNECT_TIMEOUT_MS,
      50,
      60_000,
    ),
    reconnectMaxDelayMs: r.int(
      'REDIS_RECONNECT_MAX_DELAY_MS',
      DEFAULT_REDIS_RECONNECT_MAX_DELAY_MS,
      10,
      60_000,
    ),
    idempotencyWindowMs,
  };
  if (/[{}\s]/.test(config.keyPrefix)) {
    r.problems.push(
      `REDIS_KEY_PREFIX=${JSON.stringify(config.keyPrefix)}: must not contain braces or spaces`,
    );
  }
  return url === undefined && clusterNodes.length === 0 ? undefined : config;
}
