import type { TransportName } from '../clients/transport';
import type { RunResult } from './result';
import type { RunContext } from './run-options';

/** What the CLI passes to a scenario; unset fields take the scenario's own defaults. */
export interface ScenarioOptions {
  readonly transports: readonly TransportName[];
  readonly subscribers?: number;
  readonly rate?: number;
  readonly durationS?: number;
  readonly payloadBytes?: number;
  readonly grpcSharedChannel?: boolean;
  /** Seconds of publishing before the measured window (see DEFAULT_WARMUP_S). */
  readonly warmupS?: number;
  /**
   * Broadcast: the order counts the subscribers spread over (default 1, 10 and N). Ladder:
   * one count (default N: one subscriber per order, where every delivery carries a whole
   * publish's spans).
   */
  readonly orders?: readonly number[];
  /** Overhead, ladder and broadcast: rounds of alternating servers or rungs (default: the scenario's). */
  readonly rounds?: number;
  /** Scale: the unsampled subscribers' read batch, ms; 0 reads as events arrive. */
  readonly readBatchMs?: number;
  /** Ladder: the ids of the rungs to run (default: every rung of the transport). */
  readonly rungs?: readonly string[];
  /** Seconds-long smoke sizes for the test suite. */
  readonly tiny: boolean;
}

/**
 * Publishing runs this long before latency, CPU and deliveries are counted. Every run
 * starts a fresh service: its first second is JIT compilation and heap growth, and in a
 * window of a few seconds that one-off stall decides the p99 (seen in the scale steps:
 * the same step's p99 moved by 2-3x between runs without it). Loss, duplicates and order
 * are still checked over every event, warm-up included.
 */
export const DEFAULT_WARMUP_S = 2;

/** The warm-up of a latency-measuring scenario: none at smoke sizes. */
export function warmupOf(o: ScenarioOptions): number {
  return o.warmupS ?? (o.tiny ? 0 : DEFAULT_WARMUP_S);
}

export interface Scenario {
  readonly name: string;
  readonly description: string;
  /** Transports the scenario applies to (e.g. unary is gRPC only). */
  readonly supports: (t: TransportName) => boolean;
  run(ctx: RunContext, o: ScenarioOptions): Promise<RunResult[]>;
  /**
   * Run each transport in a fresh generator process when several are asked for in one
   * invocation (see per-process.ts): for scenarios whose runs leave the generator
   * in a state that would colour the next transport's figures.
   */
  readonly processPerTransport?: boolean;
}

export const STREAMING: readonly TransportName[] = ['grpc', 'sse', 'sse-h2', 'ws', 'websocket'];
export const isStreaming = (t: TransportName): boolean => STREAMING.includes(t);
export const anyTransport = (): boolean => true;

/** Runs `fn` per transport in order, stopping early on SIGINT. */
export async function perTransport(
  ctx: RunContext,
  transports: readonly TransportName[],
  fn: (t: TransportName) => Promise<RunResult | RunResult[]>,
): Promise<RunResult[]> {
  const out: RunResult[] = [];
  for (const t of transports) {
    if (ctx.aborted()) break;
    const r = await fn(t);
    out.push(...(Array.isArray(r) ? r : [r]));
  }
  return out;
}
