import type { RunningService } from '../service/launcher';
import { promValue, type PromSample } from '../sampling/prom-text';
import type { GeneratorUsage, UsageSummary } from '../sampling/sampler';
import { distribution } from '../stats/distribution';
import { sumCounts } from '../stats/seq-tracker';
import { eventCounts, serviceUsage, type RunResult } from '../scenarios/result';
import type { SoakGroup } from './soak-clients';
import type { SoakPlan } from './soak-plan';

export interface SoakOutcome {
  readonly plan: SoakPlan;
  readonly groups: readonly SoakGroup[];
  readonly lastSeqs: ReadonlyMap<string, number>;
  readonly service: RunningService;
  readonly usage: UsageSummary | undefined;
  readonly generator: GeneratorUsage;
  readonly promSamples: readonly PromSample[] | undefined;
  readonly error: string | undefined;
  readonly durationS: number;
}

/**
 * One result per transport: its subscribers' counts against their orders' last seqs,
 * their latency, ends and errors. The service figures are the one service's, the same on
 * every row (CPU per 1,000 events over every transport's deliveries).
 */
export function soakResults(o: SoakOutcome): RunResult[] {
  const deliveredAll = o.groups.reduce((a, g) => a + g.metrics.delivered, 0);
  const lagS = o.promSamples
    ? promValue(o.promSamples, 'nodejs_eventloop_lag_p99_seconds')
    : undefined;
  const service = serviceUsage(o.service, o.usage, {
    cpuMsPer1kEvents:
      o.usage && deliveredAll > 0
        ? Math.round((o.usage.cpuMsTotal / deliveredAll) * 1000 * 100) / 100
        : null,
    eventLoopLagP99Ms: lagS === undefined ? null : Math.round(lagS * 1e5) / 100,
    heapBytesPerEvent: null,
    gc: null,
  });
  return o.groups.map((g): RunResult => {
    const counts = g.subscribers.map((s) =>
      s.tracker.counts(o.lastSeqs.get(s.orderId) ?? s.tracker.highestSeq),
    );
    const total = sumCounts(counts);
    const expected = g.subscribers.reduce(
      (a, s) => a + (o.lastSeqs.get(s.orderId) ?? s.tracker.highestSeq),
      0,
    );
    const ordersOfGroup = new Set(g.subscribers.map((s) => s.orderId)).size;
    return {
      scenario: 'soak',
      variant: '',
      transport: g.transport,
      server: 'nest',
      settings: {
        subscribers: g.subscribers.length,
        ratePerOrder: o.plan.ratePerOrder,
        durationS: o.plan.durationS,
        warmupS: 0,
        payloadBytes: 0,
        headers: 'bare',
        oneWayDelayMs: 0,
        grpcSharedChannel: false,
        env: { ...o.plan.env },
      },
      ok: o.error === undefined,
      ...(o.error === undefined ? {} : { error: o.error }),
      durationS: Math.round(o.durationS * 10) / 10,
      latency: g.metrics.latency.summary(),
      events: eventCounts(total, {
        expected,
        droppedByService: 0,
        perSec: Math.round(total.received / Math.max(1, o.plan.durationS)),
        expectedPerSec: Math.round(g.subscribers.length * o.plan.ratePerOrder),
      }),
      service,
      generator: {
        cpuPctAvg: o.generator.cpuPctAvg,
        eventLoopDelayP99Ms: o.generator.eventLoopDelayP99Ms,
        saturated: o.generator.saturated,
      },
      requestsPerSec: Math.round((g.connector.requests / Math.max(1, o.plan.durationS)) * 10) / 10,
      connectMs: distribution(g.metrics.connectMs),
      reconnectMs: distribution(g.metrics.reconnectMs),
      errors: g.metrics.errors.toJSON(),
      ends: g.metrics.ends.toJSON(),
      extra: {
        orders: ordersOfGroup,
        reconnects: g.subscribers.reduce((a, s) => a + s.reconnects, 0),
      },
    };
  });
}
