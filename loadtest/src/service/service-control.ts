import type { PromSample } from '../sampling/prom-text';

/** The service's stream domains a run can drive (the service's STREAM_DOMAIN). */
export type RunDomain = 'order' | 'payload';

export interface SimulatorSchedule {
  readonly orders: number;
  readonly ratePerOrder: number;
  /** The payload domain's bytes per event (the order domain has no filler). @default 0 */
  readonly payloadBytes?: number;
  /** The server's stream domain (its STREAM_DOMAIN; a bare server follows it). @default 'order' */
  readonly domain?: RunDomain;
  readonly prefix?: string;
  readonly durationMs?: number;
}

export interface SimulatorStatus {
  readonly state: string;
  readonly published: number;
  readonly failed: number;
}

/**
 * What a run needs to drive a server: create the orders, start and stop publishing, read
 * each order's last seq and the metrics. The service and the bare server implement it
 * through the admin API (AdminClient); an outside peer with no such API (Nchan) through
 * a publisher of its own.
 */
export interface ServiceControl {
  prepare(s: SimulatorSchedule, timeoutMs?: number): Promise<SimulatorStatus>;
  start(): Promise<SimulatorStatus>;
  stop(): Promise<SimulatorStatus>;
  status(): Promise<SimulatorStatus>;
  lastSeq(orderId: string): Promise<number>;
  lastSeqs(orderIds: readonly string[], concurrency?: number): Promise<Map<string, number>>;
  /** Undefined when the server has no /metrics. */
  metrics(): Promise<PromSample[] | undefined>;
}
