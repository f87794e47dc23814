import type { TransportName } from '../clients/transport';
import type { ServerKind } from './run-options';
import type { Distribution } from '../stats/distribution';
import type { LatencySummary } from '../stats/latency';
import type { Sample, UsageSummary } from '../sampling/sampler';
import type { GcUsage } from '../sampling/gc-window';
import type { CoreUsage } from '../sampling/core-window';
import type { SoakFigures } from '../soak/memory-trend';
import type { SeqCounts } from '../stats/seq-tracker';

/** One transport run: the unit every table row and chart point is made of. */
export interface RunResult {
  readonly scenario: string;
  /** Distinguishes runs of one scenario (e.g. "10 ev/s", "browser headers", "step 500"). */
  readonly variant: string;
  readonly transport: TransportName;
  /** Which server the run drove (see ServerKind). */
  readonly server: ServerKind;
  readonly settings: RunSettingsRecord;
  readonly ok: boolean;
  readonly error?: string;
  readonly durationS: number;
  readonly latency: LatencySummary;
  readonly events: EventCounts;
  readonly service: ServiceUsage;
  readonly generator: { cpuPctAvg: number; eventLoopDelayP99Ms: number; saturated: boolean };
  /**
   * The whole host meanwhile (% of one core): `otherCpuPctAvg` is what processes other
   * than the service, its helpers and the generator took; `busy` when that was >= 20 % of
   * a core. `helperCpuPctAvg`: the load test's helper processes for this server (Nchan's
   * publisher, on the generator's core). `serverCore`: the core the server was pinned to,
   * everything that ran on it (core-window.ts): the server's process, and kernel work its
   * process is not charged for.
   */
  readonly host?: {
    cpuPctAvg: number;
    otherCpuPctAvg: number;
    busy: boolean;
    helperCpuPctAvg?: number;
    serverCore?: CoreUsage;
  };
  readonly wire?: WireBytes;
  readonly requestsPerSec: number;
  readonly connectMs: Distribution;
  readonly reconnectMs: Distribution;
  readonly errors: Record<string, number>;
  readonly ends: Record<string, number>;
  /** From the service's /metrics at the end of the run. */
  readonly serverMetrics?: Record<string, number>;
  /** Scenario-specific figures (slow subscriber, back-pressure counts, idle memory ...). */
  readonly extra?: Record<string, number | string | boolean>;
  /** The soak scenario's readings over time, slopes and verdict (its first run only). */
  readonly soak?: SoakFigures;
}

export interface RunSettingsRecord {
  readonly subscribers: number;
  readonly ratePerOrder: number;
  readonly durationS: number;
  /** Seconds of publishing before the measured window (not in `durationS`). */
  readonly warmupS: number;
  readonly payloadBytes: number;
  readonly headers: string;
  readonly oneWayDelayMs: number;
  readonly grpcSharedChannel: boolean;
  readonly env: Record<string, string>;
  /**
   * The subscribers whose latency was not sampled read their sockets once every this
   * many ms (ReadBatcher); absent when every subscriber read events as they arrived.
   */
  readonly readBatchMs?: number;
  /**
   * The gRPC subscribers whose latency was not sampled read through a client below
   * grpc-js; absent when all used grpc-js. Alone: the lean client (LeanGrpcConnector,
   * `node:http2`; every such run before the raw client, and a shared channel since).
   */
  readonly leanGrpc?: boolean;
  /** With leanGrpc: that client was the raw one (RawGrpcConnector, HTTP/2 by hand). */
  readonly rawGrpc?: boolean;
  /**
   * The HTTP/2 subscribers (long-poll, SSE) whose latency was not sampled read through the
   * raw HTTP/2 client (RawHttp2Getter) rather than `node:http2`; absent otherwise.
   */
  readonly rawHttp2?: boolean;
}

export interface EventCounts {
  /** Events due to subscribers (sum over subscribers of their order's last seq). */
  readonly expected: number;
  readonly delivered: number;
  /**
   * Seqs a subscriber never received and was not told about (no `skipped` range, no
   * reset): silent loss, which the service's contract says is 0.
   */
  readonly lost: number;
  /**
   * Seqs the service dropped for slow subscribers and signalled (`skipped` items), as the
   * clients counted them. Absent in results recorded before skipped items existed.
   */
  readonly skipped?: number;
  /**
   * Events the service's bounded queues dropped under their overflow policy, from its
   * /metrics: for reference only, never subtracted from what clients saw.
   */
  readonly droppedByService: number;
  readonly duplicates: number;
  readonly outOfOrder: number;
  readonly resets: number;
  readonly skippedByReset: number;
  /** Delivered per second during the publishing window. */
  readonly perSec: number;
  readonly expectedPerSec: number;
}

/** What the subscribers' seq trackers counted, as a result's `events`. */
export function eventCounts(
  total: Omit<SeqCounts, 'highestSeq'>,
  run: Pick<EventCounts, 'expected' | 'droppedByService' | 'perSec' | 'expectedPerSec'>,
): EventCounts {
  return {
    expected: run.expected,
    delivered: total.received,
    lost: total.lost,
    skipped: total.skipped,
    droppedByService: run.droppedByService,
    duplicates: total.duplicates,
    outOfOrder: total.outOfOrder,
    resets: total.resets,
    skippedByReset: total.skippedByReset,
    perSec: run.perSec,
    expectedPerSec: run.expectedPerSec,
  };
}

export interface ServiceUsage {
  readonly pid: number | undefined;
  readonly pinned: boolean;
  readonly cpuPctAvg: number;
  readonly cpuPctMax: number;
  readonly rssStartBytes: number;
  readonly rssMaxBytes: number;
  readonly rssEndBytes: number;
  /** Service CPU time (ms) per 1,000 delivered events: the cost of delivery. */
  readonly cpuMsPer1kEvents: number | null;
  readonly eventLoopLagP99Ms: number | null;
  /**
   * Bytes the server's JS heap allocated per delivered event over the window (V8's
   * allocation total from its /metrics: Node 26+; null where the runtime or the server
   * does not report it). Unlike CPU time it does not move with the host's speed.
   */
  readonly heapBytesPerEvent?: number | null;
  /**
   * The server's garbage collections over the window, from the GC histogram on its
   * /metrics (the service and the bare servers; null for Nchan or a server without it).
   */
  readonly gc?: GcUsage | null;
  readonly samples: readonly Sample[];
}

export interface WireBytes {
  readonly up: number;
  readonly down: number;
  readonly perEvent: number;
  readonly downPerEvent: number;
}

/**
 * A run's `service` block from the sampler's summary of the service process; the cost
 * figures are the scenario's own (per delivered event, per call, or none).
 */
export function serviceUsage(
  service: { readonly pid: number | undefined; readonly pinned: boolean },
  usage: UsageSummary | undefined,
  cost: Pick<ServiceUsage, 'cpuMsPer1kEvents' | 'eventLoopLagP99Ms' | 'heapBytesPerEvent' | 'gc'>,
): ServiceUsage {
  return {
    pid: service.pid,
    pinned: service.pinned,
    cpuPctAvg: usage?.cpuPctAvg ?? 0,
    cpuPctMax: usage?.cpuPctMax ?? 0,
    rssStartBytes: usage?.rssStartBytes ?? 0,
    rssMaxBytes: usage?.rssMaxBytes ?? 0,
    rssEndBytes: usage?.rssEndBytes ?? 0,
    ...cost,
    samples: usage?.samples ?? [],
  };
}

/**
 * The settings of a run that is not one streaming measurement (cluster, routing, unary
 * calls): the service as it starts, with no payload padding, bare headers, no proxy delay
 * and no environment overrides. Only what such a run varies is given.
 */
export function plainSettings(
  s: Pick<RunSettingsRecord, 'subscribers' | 'ratePerOrder' | 'durationS'> &
    Partial<Pick<RunSettingsRecord, 'warmupS' | 'grpcSharedChannel'>>,
): RunSettingsRecord {
  return {
    subscribers: s.subscribers,
    ratePerOrder: s.ratePerOrder,
    durationS: s.durationS,
    warmupS: s.warmupS ?? 0,
    payloadBytes: 0,
    headers: 'bare',
    oneWayDelayMs: 0,
    grpcSharedChannel: s.grpcSharedChannel ?? false,
    env: {},
  };
}

/**
 * The event counts of a run that tracks no subscriber's sequence (it counts what was
 * needed or answered, not a stream): loss, duplicates, order and resets are not measured,
 * so they are 0 and the run's `ok` must rest on its own checks.
 */
export function untrackedEvents(
  c: Pick<EventCounts, 'expected' | 'delivered' | 'perSec' | 'expectedPerSec'>,
): EventCounts {
  return {
    expected: c.expected,
    delivered: c.delivered,
    lost: 0,
    droppedByService: 0,
    duplicates: 0,
    outOfOrder: 0,
    resets: 0,
    skippedByReset: 0,
    perSec: c.perSec,
    expectedPerSec: c.expectedPerSec,
  };
}
