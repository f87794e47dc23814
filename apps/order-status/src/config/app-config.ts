import {
  DEFAULT_CHANNEL_IDLE_MS,
  DEFAULT_MAX_STREAM_AGE_JITTER_MS,
  DEFAULT_MAX_STREAM_AGE_MS,
  DEFAULT_OVERFLOW_POLICY,
  DEFAULT_QUEUE_CAPACITY,
  DEFAULT_RING_MAX_AGE_MS,
  DEFAULT_RING_SIZE,
  OVERFLOW_POLICIES,
  type OverflowPolicy,
} from '@app/event-bus';
import { DEFAULT_IDEMPOTENCY_WINDOW_MS } from '@app/store';
import {
  DEFAULT_REDIS_CLUSTER_SLOTS_REFRESH_MS,
  DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
  DEFAULT_REDIS_CONNECT_TIMEOUT_MS,
  DEFAULT_REDIS_HISTORY_SIZE,
  DEFAULT_REDIS_KEY_PREFIX,
  DEFAULT_REDIS_PING_INTERVAL_MS,
  DEFAULT_REDIS_RECONNECT_MAX_DELAY_MS,
} from '@app/redis-store/redis-store-options'; // not the index: it loads ioredis
import {
  readAuthConfig,
  readLimitsConfig,
  type AuthConfig,
  type LimitsConfig,
} from './auth-config';
import { DEFAULT_STREAM_END_GRACE_MS } from '../connections/stream-lifecycle';
import { EnvReader, type Env, type VariableSpec } from './env-schema';
import { readBenchmarkConfig, type BenchmarkConfig } from './benchmark-config';
import { readTracingConfig, type TracingConfig } from './tracing-config';
import { readMemoryConfig, type MemoryConfig } from './memory-config';

/**
 * Every setting of the service, read once from the environment at start-up. The reader
 * calls below carry each variable's description: docs/configuration.md is generated from
 * them (`npm run docs:config`).
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
    readonly longLivedOrders: number;
    readonly speed: number;
  };
  readonly adminEnabled: boolean;
  /**
   * `DOCS_ENABLED`: the OpenAPI document at `/docs/openapi.json` and Swagger UI at `/docs`.
   * Default: on, except with NODE_ENV=production. The document holds no secret (it is
   * committed as docs/openapi.json), but the UI puts 1.5 MB of third-party script on the
   * API's origin, where the session cookie is valid; production opts in explicitly.
   */
  readonly docs: { readonly enabled: boolean };
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
    /**
     * Time a connection gets to send the HTTP/2 preface (a socket that sends nothing is
     * closed then). @default 10_000 ms (DEFAULT_GRPC_PREFACE_TIMEOUT_MS)
     */
    readonly prefaceTimeoutMs: number;
  };
  readonly ws: {
    readonly pingIntervalMs: number;
    readonly pingTimeoutMs: number;
    readonly maxHttpBufferBytes: number;
    readonly corsOrigins: readonly string[];
  };
  /** The raw WebSocket transport (RFC 6455, transports/websocket). */
  readonly websocket: {
    /** A ping per interval; a peer that has not answered the previous one is cut. */
    readonly pingIntervalMs: number;
    /** Largest message a client may send (it needs none; control frames are 125 B). */
    readonly maxPayloadBytes: number;
  };
  readonly logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** Whether ordinary requests run in a logging context (ops/request-context.ts). */
  readonly logRequestContext: 'auto' | 'on' | 'off';
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
  /** The byte bound of each in-process structure a client can grow (memory-config.ts). */
  readonly memory: MemoryConfig;
  /** Benchmark-only switches that turn production layers off (benchmark-config.ts). */
  readonly benchmark: BenchmarkConfig;
  /** OpenTelemetry tracing (OTEL_* variables, tracing-config.ts); undefined: off. */
  readonly tracing?: TracingConfig;
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
  readonly pingIntervalMs: number;
  readonly connectTimeoutMs: number;
  readonly reconnectMaxDelayMs: number;
  readonly clusterSlotsRefreshMs: number;
  /** The same as AppConfig.idempotencyWindowMs (the Redis store keeps the keys). */
  readonly idempotencyWindowMs: number;
}

const MAX_PORT = 65_535;
/** @default 3000 */
export const DEFAULT_HTTP_PORT = 3000;
/** @default 10_000 ms for a TLS handshake (Node's own default is 120 s) */
export const DEFAULT_TLS_HANDSHAKE_TIMEOUT_MS = 10_000;
/** @default 10_000 ms for a gRPC connection to send the HTTP/2 preface, as for a TLS handshake */
export const DEFAULT_GRPC_PREFACE_TIMEOUT_MS = 10_000;
/** @default 30_000 ms between raw WebSocket pings (a dead peer is cut within two) */
export const DEFAULT_WEBSOCKET_PING_INTERVAL_MS = 30_000;
/** @default 4_096 bytes: the largest message a raw WebSocket client may send */
export const DEFAULT_WEBSOCKET_MAX_PAYLOAD_BYTES = 4_096;
const HOUR_MS = 3_600_000;
/** @default 1: `order-1`, the order the README's and the banner's examples follow */
export const DEFAULT_SIMULATOR_LONG_LIVED_ORDERS = 1;

/** Reads and validates the configuration; throws ConfigError naming every bad variable. */
export function loadConfig(env: Env = process.env): AppConfig {
  const r = new EnvReader(env);
  const config = readConfig(r);
  r.assertValid();
  return config;
}

/**
 * Every variable the service reads, with its type, default, range and description, in the
 * order they are read: what docs/configuration.md is generated from.
 */
export function describeConfig(): VariableSpec[] {
  const r = new EnvReader({});
  readConfig(r);
  return [...r.variables.values()];
}

/** Reads every variable through `r`, which collects the problems and the descriptions. */
function readConfig(r: EnvReader): AppConfig {
  const idempotencyWindowMs = r.int(
    'IDEMPOTENCY_WINDOW_MS',
    DEFAULT_IDEMPOTENCY_WINDOW_MS,
    1_000,
    24 * HOUR_MS,
    "how long a publish's `Idempotency-Key` / `request_id` is remembered (in Redis when configured, else in memory)",
  );
  const config: AppConfig = {
    host: r.str('HOST', '127.0.0.1', 'bind address of every listener'),
    httpPort: r.int(
      'HTTP_PORT',
      DEFAULT_HTTP_PORT,
      0,
      MAX_PORT,
      'plain HTTP/1.1: REST, SSE, long-poll, socket.io (0: any free port)',
    ),
    httpsPort: r.int(
      'HTTPS_PORT',
      3443,
      -1,
      MAX_PORT,
      'TLS with ALPN `h2` and `http/1.1`: the same routes over HTTP/2 (0: any free port, -1: off)',
    ),
    grpcPort: r.int(
      'GRPC_PORT',
      50051,
      0,
      MAX_PORT,
      'gRPC: `orderstatus.v1.OrderStatusService`, health and reflection (0: any free port)',
    ),
    tls: {
      certFile: r.optional('TLS_CERT_FILE', {
        text: 'certificate (PEM) for the HTTPS port; set with `TLS_KEY_FILE`, or neither for the development certificate',
        values: 'path',
      }),
      keyFile: r.optional('TLS_KEY_FILE', {
        text: 'private key (PEM) of `TLS_CERT_FILE`',
        values: 'path',
      }),
      devCertDir: r.str('TLS_DEV_CERT_DIR', '.certs', {
        text: 'where the development certificate is generated and kept when no certificate is configured',
        values: 'path',
      }),
    },
    http: {
      headersTimeoutMs: r.int(
        'HTTP_HEADERS_TIMEOUT_MS',
        10_000,
        1_000,
        120_000,
        'time to receive request headers, on the plain and TLS ports (slow-loris bound)',
      ),
      requestTimeoutMs: r.int(
        'HTTP_REQUEST_TIMEOUT_MS',
        30_000,
        1_000,
        600_000,
        'time to receive a whole request (not the response: streams are unaffected)',
      ),
      keepAliveTimeoutMs: r.int(
        'HTTP_KEEPALIVE_TIMEOUT_MS',
        65_000,
        1_000,
        600_000,
        'idle keep-alive; longer than typical load-balancer idle timeouts (60 s)',
      ),
      h2SessionTimeoutMs: r.int(
        'HTTP2_SESSION_TIMEOUT_MS',
        120_000,
        1_000,
        HOUR_MS,
        'idle HTTP/2 session timeout',
      ),
      tlsHandshakeTimeoutMs: r.int(
        'HTTP_TLS_HANDSHAKE_TIMEOUT_MS',
        DEFAULT_TLS_HANDSHAKE_TIMEOUT_MS,
        1_000,
        120_000,
        'time to finish a TLS handshake (a socket that never sends a ClientHello is closed then)',
      ),
      bodyLimitBytes: r.int(
        'HTTP_BODY_LIMIT_BYTES',
        16_384,
        256,
        1_048_576,
        'largest request body',
      ),
    },
    bus: {
      ringSize: r.int(
        'BUS_RING_SIZE',
        DEFAULT_RING_SIZE,
        1,
        100_000,
        'events retained per order for resume',
      ),
      ringMaxAgeMs: r.int(
        'BUS_RING_MAX_AGE_MS',
        DEFAULT_RING_MAX_AGE_MS,
        1_000,
        24 * HOUR_MS,
        'oldest event age retained for resume',
      ),
      queueCapacity: r.int(
        'BUS_QUEUE_CAPACITY',
        DEFAULT_QUEUE_CAPACITY,
        1,
        100_000,
        'live events queued per subscriber',
      ),
      overflowPolicy: r.oneOf(
        'BUS_OVERFLOW_POLICY',
        DEFAULT_OVERFLOW_POLICY,
        OVERFLOW_POLICIES,
        'what a full subscriber queue does; what it drops reaches the client as one `skipped` range',
      ),
      maxStreamAgeMs: r.int(
        'STREAM_MAX_AGE_MS',
        DEFAULT_MAX_STREAM_AGE_MS,
        0,
        24 * HOUR_MS,
        'streams (gRPC, SSE, socket.io) end with reason `max_age` after this long, so load balancers can rebalance; clients resume (0: never)',
      ),
      maxStreamAgeJitterMs: r.int(
        'STREAM_MAX_AGE_JITTER_MS',
        DEFAULT_MAX_STREAM_AGE_JITTER_MS,
        0,
        HOUR_MS,
        'random extra age per stream, so streams opened together do not reconnect together',
      ),
      channelIdleMs: r.int(
        'BUS_CHANNEL_IDLE_MS',
        DEFAULT_CHANNEL_IDLE_MS,
        0,
        HOUR_MS,
        'how long an order stays in the bus (ring, snapshot, its Redis subscription) after its last local subscriber left, so a reconnect finds it warm (0: at once)',
      ),
    },
    simulator: {
      enabled: r.bool('SIMULATOR_ENABLED', true, 'start the simulator with the service'),
      orders: r.int('SIMULATOR_ORDERS', 20, 1, 100_000, 'orders moving at once'),
      ratePerOrder: r.num(
        'SIMULATOR_RATE',
        0.5,
        0.001,
        1_000,
        'tracking updates per second per order while it is shipped or out for delivery (each order moves through its statuses after its own dwell times, 2-30 s each; every tenth is cancelled, with a reason)',
      ),
      longLivedOrders: r.int(
        'SIMULATOR_LONG_LIVED_ORDERS',
        DEFAULT_SIMULATOR_LONG_LIVED_ORDERS,
        0,
        100_000,
        'the first N orders (`order-1` ...) never finish: out for delivery, each ETA starts another round, so the documented examples answer at any time; the others are replaced by new ids when they finish',
      ),
      speed: r.num(
        'SIMULATOR_SPEED',
        1,
        0.01,
        1_000,
        'dwell times are divided by this (tests run the life cycle in seconds); tracking stays at `SIMULATOR_RATE`',
      ),
    },
    adminEnabled: r.bool('ADMIN_ENABLED', true, 'mount `/v1/admin/*` (simulator control)'),
    docs: {
      enabled: r.bool('DOCS_ENABLED', r.str('NODE_ENV', 'development') !== 'production', {
        text: 'serve the OpenAPI document at `/docs/openapi.json` and Swagger UI at `/docs`',
        default: '`true` (`false` with `NODE_ENV=production`)',
      }),
    },
    streamEndGraceMs: r.int(
      'STREAM_END_GRACE_MS',
      DEFAULT_STREAM_END_GRACE_MS,
      100,
      60_000,
      'how long a connection whose stream has ended gets to take its last bytes before it is destroyed (a client that stopped reading)',
    ),
    sse: {
      heartbeatMs: r.int(
        'SSE_HEARTBEAT_MS',
        15_000,
        1_000,
        300_000,
        '`: ping` comment interval on a quiet stream (proxies close idle connections)',
      ),
      retryMs: r.int('SSE_RETRY_MS', 2_000, 100, 60_000, '`retry:` sent to EventSource'),
    },
    longPoll: {
      defaultWaitS: r.int(
        'LONG_POLL_DEFAULT_WAIT_S',
        30,
        0,
        300,
        'hold time when `wait` is absent (at most `LONG_POLL_MAX_WAIT_S`)',
      ),
      maxWaitS: r.int('LONG_POLL_MAX_WAIT_S', 60, 0, 300, 'cap on `wait`'),
      maxBatch: r.int('LONG_POLL_MAX_BATCH', 100, 1, 10_000, 'most events per long-poll answer'),
    },
    grpc: {
      keepaliveTimeMs: r.int(
        'GRPC_KEEPALIVE_TIME_MS',
        30_000,
        1_000,
        HOUR_MS,
        'server HTTP/2 PING interval',
      ),
      keepaliveTimeoutMs: r.int(
        'GRPC_KEEPALIVE_TIMEOUT_MS',
        10_000,
        1_000,
        HOUR_MS,
        'PING ack timeout before the connection is closed',
      ),
      keepalivePermitWithoutCalls: r.bool(
        'GRPC_KEEPALIVE_PERMIT_WITHOUT_CALLS',
        true,
        'ping (and accept pings) with no active call',
      ),
      minPingIntervalMs: r.int(
        'GRPC_MIN_PING_INTERVAL_MS',
        10_000,
        1_000,
        HOUR_MS,
        'client pings more frequent than this get GOAWAY',
      ),
      maxConnectionAgeMs: r.int(
        'GRPC_MAX_CONNECTION_AGE_MS',
        600_000,
        1_000,
        24 * HOUR_MS,
        'connections are recycled (GOAWAY) after this age, so load balancers rebalance',
      ),
      maxConnectionAgeGraceMs: r.int(
        'GRPC_MAX_CONNECTION_AGE_GRACE_MS',
        30_000,
        0,
        HOUR_MS,
        'time open calls get after that GOAWAY',
      ),
      maxReceiveMessageBytes: r.int(
        'GRPC_MAX_RECEIVE_BYTES',
        65_536,
        1_024,
        4_194_304,
        'largest request message',
      ),
      prefaceTimeoutMs: r.int(
        'GRPC_PREFACE_TIMEOUT_MS',
        DEFAULT_GRPC_PREFACE_TIMEOUT_MS,
        1_000,
        120_000,
        'time to send the HTTP/2 preface (a connection that sends nothing is closed then)',
      ),
    },
    ws: {
      pingIntervalMs: r.int(
        'WS_PING_INTERVAL_MS',
        25_000,
        1_000,
        600_000,
        'engine.io ping interval',
      ),
      pingTimeoutMs: r.int('WS_PING_TIMEOUT_MS', 20_000, 1_000, 600_000, 'engine.io ping timeout'),
      maxHttpBufferBytes: r.int(
        'WS_MAX_HTTP_BUFFER_BYTES',
        16_384,
        256,
        1_048_576,
        "largest socket.io message (socket.io's own default: 1 MB)",
      ),
      corsOrigins: r.list(
        'WS_CORS_ORIGINS',
        ['http://localhost:3000', 'https://localhost:3443'],
        'origins allowed to open a socket.io or raw WebSocket connection from a browser (besides this origin)',
      ),
    },
    websocket: {
      pingIntervalMs: r.int(
        'WEBSOCKET_PING_INTERVAL_MS',
        DEFAULT_WEBSOCKET_PING_INTERVAL_MS,
        1_000,
        600_000,
        'raw WebSocket ping interval; a peer that has not answered the previous ping by the next is cut',
      ),
      maxPayloadBytes: r.int(
        'WEBSOCKET_MAX_PAYLOAD_BYTES',
        DEFAULT_WEBSOCKET_MAX_PAYLOAD_BYTES,
        125,
        1_048_576,
        'largest message a raw WebSocket client may send (it sends none: the connection closes with 1009)',
      ),
    },
    logLevel: r.oneOf(
      'LOG_LEVEL',
      'info',
      ['debug', 'info', 'warn', 'error', 'silent'],
      'JSON log lines at this level and above',
    ),
    logRequestContext: r.oneOf(
      'LOG_REQUEST_CONTEXT',
      'auto',
      ['auto', 'on', 'off'],
      "whether lines logged while handling a request carry its id (the request's own line always does); auto: only where that costs no promise hooks (Node 24 and later), on: on any runtime, off: never",
    ),
    shutdown: {
      drainMs: r.int(
        'SHUTDOWN_DRAIN_MS',
        10_000,
        0,
        300_000,
        'on SIGTERM, how long clients get to leave after being told to reconnect, before the rest is closed',
      ),
      reconnectJitterMs: r.int(
        'SHUTDOWN_RECONNECT_JITTER_MS',
        5_000,
        0,
        300_000,
        'reconnect delays advised at shutdown are spread over 100 ms + this, so a restart causes no reconnect storm',
      ),
    },
    idempotencyWindowMs,
    redis: readRedisConfig(r, idempotencyWindowMs),
    auth: readAuthConfig(r),
    limits: readLimitsConfig(r),
    memory: readMemoryConfig(r),
    benchmark: readBenchmarkConfig(r, r.str('NODE_ENV', 'development') === 'production'),
    tracing: readTracingConfig(r),
  };
  if (config.longPoll.defaultWaitS > config.longPoll.maxWaitS) {
    r.problems.push(
      `LONG_POLL_DEFAULT_WAIT_S=${config.longPoll.defaultWaitS} must not exceed LONG_POLL_MAX_WAIT_S=${config.longPoll.maxWaitS}`,
    );
  }
  return config;
}

/** REDIS_* variables; the Redis store is used only when REDIS_URL or REDIS_CLUSTER_NODES is set. */
function readRedisConfig(r: EnvReader, idempotencyWindowMs: number): RedisConfig | undefined {
  const url = r.optional('REDIS_URL', {
    text: 'use the shared Redis store (several instances); unset, and no `REDIS_CLUSTER_NODES`: the embedded in-memory store',
    values: '`redis://host:port[/db]`, `rediss://…`',
  });
  const clusterNodes = r.list('REDIS_CLUSTER_NODES', [], {
    text: 'Redis Cluster seed nodes (any nodes of the cluster); wins over `REDIS_URL`',
    values: 'comma list of `host:port`',
  });
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
    keyPrefix: r.str('REDIS_KEY_PREFIX', DEFAULT_REDIS_KEY_PREFIX, {
      text: 'prefix of every key and pub/sub channel',
      values: 'no braces or spaces',
    }),
    historySize: r.int(
      'REDIS_HISTORY_SIZE',
      DEFAULT_REDIS_HISTORY_SIZE,
      1,
      100_000,
      'events kept per order in Redis, for resume on any instance',
    ),
    commandTimeoutMs: r.int(
      'REDIS_COMMAND_TIMEOUT_MS',
      DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
      50,
      60_000,
      'a command to a hung Redis fails after this (publish answers 503)',
    ),
    pingIntervalMs: r.int(
      'REDIS_PING_INTERVAL_MS',
      DEFAULT_REDIS_PING_INTERVAL_MS,
      100,
      60_000,
      'how often Redis is pinged; a PING that fails (after `REDIS_COMMAND_TIMEOUT_MS`) makes the instance not ready until one succeeds',
    ),
    connectTimeoutMs: r.int(
      'REDIS_CONNECT_TIMEOUT_MS',
      DEFAULT_REDIS_CONNECT_TIMEOUT_MS,
      50,
      60_000,
      'connection attempt timeout; also how long start-up waits for Redis',
    ),
    reconnectMaxDelayMs: r.int(
      'REDIS_RECONNECT_MAX_DELAY_MS',
      DEFAULT_REDIS_RECONNECT_MAX_DELAY_MS,
      10,
      60_000,
      'longest pause between reconnection attempts',
    ),
    clusterSlotsRefreshMs: r.int(
      'REDIS_CLUSTER_SLOTS_REFRESH_MS',
      DEFAULT_REDIS_CLUSTER_SLOTS_REFRESH_MS,
      100,
      60_000,
      'Redis Cluster: how often the slot map is read again; after a slot move, the longest wait before live events of its orders flow again',
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
