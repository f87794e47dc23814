import type { Subscriber } from '../clients/subscriber';
import { promValue } from '../sampling/prom-text';
import { readProcStat } from '../sampling/proc-stat';
import type { ServiceControl } from '../service/admin';
import { runTransport, waitFor } from './run-transport';
import { isStreaming, perTransport, type Scenario } from './scenario';

export const TAKE_BEFORE_PAUSE = 100;
export const PAUSES_S = [0.5, 1, 2] as const;
/** Time allowed after resuming for what the service held back to arrive. */
const RESUME_DRAIN_MS = 1_000;

interface PauseResult {
  produced: number;
  deliveredAfterResume: number;
  dropped: number;
  overflows: number;
  rssDeltaKB: number;
}

async function counters(admin: ServiceControl): Promise<{ dropped: number; overflows: number }> {
  const m = await admin.metrics();
  return {
    dropped: (m && promValue(m, 'order_queue_dropped_events_total')) ?? 0,
    overflows: (m && promValue(m, 'order_queue_overflows_total')) ?? 0,
  };
}

/**
 * Seed 002's "take 100, then stop reading" at three quiet periods: the client stops
 * reading its socket (so TCP and HTTP/2 windows fill, as with a stalled consumer), and
 * we record what the service produced for it meanwhile, how much arrived after it
 * resumed (held in the service's queue and the socket buffers), how much the bounded
 * queue dropped (from /metrics), and the service's RSS growth.
 */
export const backpressure: Scenario = {
  name: 'backpressure',
  description: 'read 100 events, stop reading 0.5/1/2 s: produced, queued, dropped, memory',
  supports: isStreaming,
  run: (ctx, o) =>
    perTransport(ctx, o.transports.filter(isStreaming), async (transport) => {
      const pauses = o.tiny ? [0.5] : [...PAUSES_S];
      const results: PauseResult[] = [];
      let received = 0;
      let phaseStart = 0;
      let busy = false;
      let finished: Promise<void> = Promise.resolve();
      let sub: Subscriber | undefined;
      let admin: ServiceControl | undefined;
      let pid: number | undefined;

      const pause = async (seconds: number): Promise<void> => {
        const s = sub!;
        const a = admin!;
        s.pause();
        const seqBefore = await a.lastSeq(s.orderId);
        const before = await counters(a);
        const rssBefore = pid === undefined ? 0 : (readProcStat(pid)?.rssBytes ?? 0);
        await new Promise((r) => setTimeout(r, seconds * 1000));
        const seqAfter = await a.lastSeq(s.orderId);
        const rssPaused = pid === undefined ? 0 : (readProcStat(pid)?.rssBytes ?? 0);
        const atResume = received;
        s.resume();
        await waitFor(() => s.tracker.highestSeq >= seqAfter, RESUME_DRAIN_MS);
        const after = await counters(a);
        results.push({
          produced: seqAfter - seqBefore,
          deliveredAfterResume: received - atResume,
          dropped: after.dropped - before.dropped,
          overflows: after.overflows - before.overflows,
          rssDeltaKB: Math.round((rssPaused - rssBefore) / 1024),
        });
        phaseStart = received;
      };

      const rate = o.rate ?? 500;
      return runTransport(
        ctx,
        {
          scenario: 'backpressure',
          variant: '',
          transport,
          subscribers: 1,
          ratePerOrder: rate,
          durationS:
            o.durationS ??
            Math.ceil(
              pauses.reduce(
                (a, p) => a + p + RESUME_DRAIN_MS / 1000 + (TAKE_BEFORE_PAUSE * 1.5) / rate,
                1,
              ),
            ),
          payloadBytes: o.payloadBytes ?? 4096,
          reconnect: false,
          drainTimeoutMs: 2_000,
        },
        {
          subscriberOptions: () => ({
            onEvent: () => {
              received += 1;
              if (
                busy ||
                results.length >= pauses.length ||
                received - phaseStart < TAKE_BEFORE_PAUSE
              )
                return;
              busy = true;
              finished = pause(pauses[results.length]).finally(() => (busy = false));
            },
          }),
          beforeStart: (live) => {
            sub = live.subscribers[0];
            admin = live.admin;
            pid = live.service.pid;
          },
          afterDrain: async () => {
            await finished;
            const extra: Record<string, number> = {};
            results.forEach((r, i) => {
              const k = `pause${pauses[i]}s`;
              extra[`${k}Produced`] = r.produced;
              extra[`${k}DeliveredAfterResume`] = r.deliveredAfterResume;
              extra[`${k}Dropped`] = r.dropped;
              extra[`${k}Overflows`] = r.overflows;
              extra[`${k}RssDeltaKB`] = r.rssDeltaKB;
            });
            extra.pausesCompleted = results.length;
            return extra;
          },
        },
      );
    }),
};
