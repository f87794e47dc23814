import type { TransportName } from '../clients/transport';
import { runTransport, runVariants } from './run-transport';
import type { TransportRun } from './run-options';
import {
  anyTransport,
  isStreaming,
  perTransport,
  type Scenario,
  type ScenarioOptions,
  warmupOf,
} from './scenario';

/**
 * The payload that makes a payload event exactly as large as the order's steady tracking
 * update with the 12 bytes of filler the load test gave it to match seed 001's event size
 * (~117 bytes of JSON): 169 bytes of JSON, and (gRPC) a 65-byte SubscribeResponse, at seq
 * 3 of `lt1-123` (default-size.spec.ts encodes that update with the old contract).
 */
export const PAYLOAD_AS_LARGE_AS_TRACKING = { json: 94, protobuf: 41 } as const;
/**
 * The payload that makes a payload event as large as the order's steady tracking update
 * without filler, in the JSON the stores keep (144 bytes at seq 3 of `lt1-123`).
 */
export const PAYLOAD_AS_LARGE_AS_PLAIN_TRACKING = 69;

/**
 * A run's default event size on `transport`: the payload whose event puts as many bytes
 * on the wire as the padded tracking update the load test published before the payload
 * domain, so the figures compare with earlier runs.
 */
export function defaultPayloadBytes(transport: TransportName): number {
  const sizes = PAYLOAD_AS_LARGE_AS_TRACKING;
  return transport === 'grpc' ? sizes.protobuf : sizes.json;
}
/** Seed 001 counted the bytes of 1,000 events. */
export const BYTES_EVENTS = 1_000;
/** The slow consumer's link (seed 000 throttled one client to 50 KB/s). */
export const SLOW_CONSUMER_BYTES_PER_SEC = 50_000;

/**
 * The steady load the comparisons run on every server they compare (overhead, ladder):
 * N subscribers at R ev/s each for D s after the warm-up, ~117-byte events; the
 * scenario gives its own full-size N and D.
 */
export function steadyLoad(
  o: ScenarioOptions,
  full: { readonly subscribers: number; readonly durationS: number },
  transport: TransportName,
): Pick<TransportRun, 'subscribers' | 'ratePerOrder' | 'durationS' | 'warmupS' | 'payloadBytes'> {
  return {
    subscribers: o.subscribers ?? (o.tiny ? 4 : full.subscribers),
    ratePerOrder: o.rate ?? 10,
    durationS: o.durationS ?? (o.tiny ? 1 : full.durationS),
    warmupS: warmupOf(o),
    payloadBytes: o.payloadBytes ?? defaultPayloadBytes(transport),
  };
}

export const steady: Scenario = {
  name: 'steady',
  description: 'N subscribers x R events/s each for D seconds',
  supports: anyTransport,
  run: (ctx, o) =>
    perTransport(ctx, o.transports, (transport) =>
      runTransport(ctx, {
        scenario: 'steady',
        variant: '',
        transport,
        subscribers: o.subscribers ?? (o.tiny ? 5 : 500),
        ratePerOrder: o.rate ?? 10,
        durationS: o.durationS ?? (o.tiny ? 1 : 10),
        warmupS: warmupOf(o),
        payloadBytes: o.payloadBytes ?? defaultPayloadBytes(transport),
        grpcSharedChannel: o.grpcSharedChannel,
      }),
    ),
};

export const wan: Scenario = {
  name: 'wan',
  description: 'proxy adds 25 ms each way; latency at 10 and 50 events/s',
  supports: anyTransport,
  run: (ctx, o) =>
    perTransport(ctx, o.transports, (transport) =>
      runVariants(
        ctx,
        (o.rate !== undefined ? [o.rate] : [10, 50]).map((rate) => ({
          run: {
            scenario: 'wan',
            variant: `${rate} ev/s`,
            transport,
            subscribers: o.subscribers ?? (o.tiny ? 3 : 50),
            ratePerOrder: rate,
            durationS: o.durationS ?? (o.tiny ? 2 : 5),
            warmupS: warmupOf(o),
            payloadBytes: o.payloadBytes ?? defaultPayloadBytes(transport),
            proxy: { oneWayDelayMs: 25, only: 'all' },
            grpcSharedChannel: o.grpcSharedChannel,
          },
        })),
      ),
    ),
};

/**
 * 1,000 events of ~117 bytes to one subscriber through the byte-counting proxy, once with
 * bare headers and once with a browser's, handshakes included (the method of seed 001).
 */
export const bytes: Scenario = {
  name: 'bytes',
  description: '1,000 events of ~117 bytes through the proxy, bare vs browser headers',
  supports: anyTransport,
  run: (ctx, o) =>
    perTransport(ctx, o.transports, (transport) => {
      const rate = o.rate ?? 250;
      return runVariants(
        ctx,
        (['bare', 'browser'] as const).map((headers) => ({
          run: {
            scenario: 'bytes',
            variant: `${headers} headers`,
            transport,
            subscribers: 1,
            ratePerOrder: rate,
            durationS: o.durationS ?? (o.tiny ? 1 : Math.ceil(BYTES_EVENTS / rate)),
            payloadBytes: o.payloadBytes ?? defaultPayloadBytes(transport),
            headers,
            proxy: { only: 'all' },
            countSetupBytes: true,
          },
        })),
      );
    }),
};

/**
 * One subscriber throttled to 50 KB/s among healthy ones. Events are padded to 4 KB at
 * 20 ev/s (80 KB/s per order) so the throttle actually binds; a baseline run without the
 * throttle gives the healthy p99 to compare with.
 */
export const slowConsumer: Scenario = {
  name: 'slow-consumer',
  description: 'one subscriber throttled to 50 KB/s among healthy ones',
  supports: isStreaming,
  run: (ctx, o) =>
    perTransport(ctx, o.transports.filter(isStreaming), (transport) =>
      runVariants(
        ctx,
        [false, true].map((throttled) => ({
          run: {
            scenario: 'slow-consumer',
            variant: throttled ? 'one throttled' : 'baseline',
            transport,
            subscribers: o.subscribers ?? (o.tiny ? 4 : 200),
            ratePerOrder: o.rate ?? 20,
            durationS: o.durationS ?? (o.tiny ? 2 : 8),
            payloadBytes: o.payloadBytes ?? 4096,
            proxy: { only: 'first' },
            throttleBytesPerSec: throttled ? SLOW_CONSUMER_BYTES_PER_SEC : undefined,
            reconnect: false,
            drainTimeoutMs: 2_000,
          },
          hooks: {
            afterDrain: async (live) => {
              const slow = live.subscribers[0];
              const last = await live.admin.lastSeq(slow.orderId);
              const c = slow.tracker.counts(last);
              const lat = live.firstMetrics.latency.summary();
              return {
                slowDue: last,
                slowReceived: c.received,
                slowLost: c.lost,
                slowResets: c.resets,
                slowP99Ms: lat.p99Ms,
                slowMaxMs: lat.maxMs,
                slowErrors: live.firstMetrics.errors.total,
                slowStillConnected: slow.connected,
              };
            },
          },
        })),
      ),
    ),
};
