import * as grpc from '@grpc/grpc-js';
import {
  authMetadata,
  orderStatusClientCtor,
  OWN_CONNECTION_OPTIONS,
  type OrderStatusClient,
} from '../clients/grpc-connector';
import { AdminClient, orderId } from '../service/admin';
import { distribution } from '../stats/distribution';
import { LatencyRecorder } from '../stats/latency';
import { GeneratorMonitor, UsageSampler } from '../sampling/sampler';
import { plainSettings, serviceUsage, untrackedEvents, type RunResult } from './result';
import type { Scenario } from './scenario';

export const UNARY_CALLS = 500;
/** Seed 003 ran its concurrent tests with a parallelism of 50. */
export const UNARY_CONCURRENCY = 50;
export const UNARY_DEADLINE_MS = 10_000;

type Case = { sequential: boolean; reuse: boolean };
const CASES: readonly Case[] = [
  { sequential: true, reuse: false },
  { sequential: true, reuse: true },
  { sequential: false, reuse: false },
  { sequential: false, reuse: true },
];

function getOrder(client: OrderStatusClient, id: string, token: string | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    client.GetOrder(
      { orderId: id },
      authMetadata(token),
      { deadline: Date.now() + UNARY_DEADLINE_MS },
      (err) => (err ? reject(err) : resolve()),
    );
  });
}

/**
 * GetOrder, sequential and 50-concurrent, over one reused channel or a new channel per
 * call: the four cases of seed 003 (which ran 500 calls each on ASP.NET Core).
 */
export const unary: Scenario = {
  name: 'unary',
  description: 'GetOrder sequential/concurrent x reused/new channel (seed 003)',
  supports: (t) => t === 'grpc',
  run: async (ctx, o) => {
    if (!o.transports.includes('grpc')) return [];
    const calls = o.subscribers ?? (o.tiny ? 20 : UNARY_CALLS);
    const base = {
      scenario: 'unary',
      transport: 'grpc' as const,
      subscribers: 1,
      ratePerOrder: 0,
      durationS: 0,
      payloadBytes: 0,
    };
    const service = ctx.target ?? (await ctx.launch({ ...base, variant: '' }, { inspect: false }));
    const out: RunResult[] = [];
    try {
      const token = ctx.token ?? service.token;
      const admin = new AdminClient(service, token);
      await admin.prepare({ orders: 1, ratePerOrder: 1, prefix: 'unary' });
      const id = orderId('unary', 1);
      const Ctor = orderStatusClientCtor();
      const address = `${service.host}:${service.grpcPort}`;
      // Warm-up on a throwaway channel, as seed 003 did, so JIT and first-call costs are out.
      const warm = new Ctor(address, grpc.credentials.createInsecure(), OWN_CONNECTION_OPTIONS);
      for (let i = 0; i < 20; i += 1) await getOrder(warm, id, token);
      warm.close();

      for (const c of CASES) {
        if (ctx.aborted()) break;
        const variant = `${c.sequential ? 'sequential' : `concurrent x${UNARY_CONCURRENCY}`}, ${c.reuse ? 'reused channel' : 'new channel per call'}`;
        const latency = new LatencyRecorder();
        const errors: Record<string, number> = {};
        const shared = c.reuse
          ? new Ctor(address, grpc.credentials.createInsecure(), OWN_CONNECTION_OPTIONS)
          : undefined;
        const one = async (): Promise<void> => {
          const client =
            shared ?? new Ctor(address, grpc.credentials.createInsecure(), OWN_CONNECTION_OPTIONS);
          const t0 = performance.now();
          try {
            await getOrder(client, id, token);
            latency.recordUs((performance.now() - t0) * 1000);
          } catch (err) {
            const code = `grpc_${grpc.status[(err as grpc.ServiceError).code] ?? 'UNKNOWN'}`;
            errors[code] = (errors[code] ?? 0) + 1;
          } finally {
            if (!shared) client.close();
          }
        };
        const sampler =
          service.pid === undefined ? undefined : UsageSampler.forPid(service.pid, 100);
        const gen = new GeneratorMonitor();
        sampler?.start();
        gen.start();
        const t0 = performance.now();
        let next = 0;
        const worker = async (): Promise<void> => {
          while (next < calls) {
            next += 1;
            await one();
          }
        };
        await Promise.all(Array.from({ length: c.sequential ? 1 : UNARY_CONCURRENCY }, worker));
        const totalMs = performance.now() - t0;
        const usage = sampler?.stop();
        const g = gen.stop();
        shared?.close();
        ctx.progress(`[unary ${variant}] ${calls} calls in ${totalMs.toFixed(0)} ms`, true);
        out.push({
          ...base,
          variant,
          server: 'nest',
          settings: plainSettings({
            subscribers: 1,
            ratePerOrder: 0,
            durationS: totalMs / 1000,
            grpcSharedChannel: c.reuse,
          }),
          ok: Object.keys(errors).length === 0,
          durationS: Math.round(totalMs) / 1000,
          latency: latency.summary(),
          events: untrackedEvents({
            expected: calls,
            delivered: latency.count,
            perSec: Math.round((latency.count / totalMs) * 1000),
            expectedPerSec: 0,
          }),
          service: serviceUsage(service, usage, {
            cpuMsPer1kEvents: usage
              ? Math.round((usage.cpuMsTotal / calls) * 1000 * 100) / 100
              : null,
            eventLoopLagP99Ms: null,
          }),
          generator: {
            cpuPctAvg: g.cpuPctAvg,
            eventLoopDelayP99Ms: g.eventLoopDelayP99Ms,
            saturated: g.saturated,
          },
          requestsPerSec: Math.round((calls / totalMs) * 1000 * 10) / 10,
          connectMs: distribution([]),
          reconnectMs: distribution([]),
          errors,
          ends: {},
          extra: { calls, totalMs: Math.round(totalMs) },
        });
      }
    } finally {
      if (!ctx.target) await service.stop();
    }
    return out;
  },
};
