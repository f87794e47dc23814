import { heapUsedAfterGc } from '../service/inspector-gc';
import { readProcStat } from '../sampling/proc-stat';
import { runTransport } from './run-transport';
import { anyTransport, perTransport, type Scenario } from './scenario';

/**
 * N subscribers, no events: service CPU, requests/s (long-poll hold timeouts cycling,
 * short-poll churn) and RSS per connection, measured after forced GCs before and after
 * the subscribers connect (seed 001's method; seed 000's idle table). The JS heap in use
 * after the same GCs is kept beside it: RSS also counts pages the allocator and V8 keep
 * mapped after the connection burst, which differs between Node versions, and only the
 * heap says what the service still holds.
 */
export const idle: Scenario = {
  name: 'idle',
  description: 'N subscribers, no events: CPU, RSS per connection after GC, requests/s',
  supports: anyTransport,
  run: (ctx, o) =>
    perTransport(ctx, o.transports, async (transport) => {
      let rssBefore = 0;
      let heapBefore: number | undefined;
      const subscribers = o.subscribers ?? (o.tiny ? 5 : 1000);
      return runTransport(
        ctx,
        {
          scenario: 'idle',
          variant: '',
          transport,
          subscribers,
          ratePerOrder: 1,
          durationS: o.durationS ?? (o.tiny ? 2 : 8),
          payloadBytes: 0,
          publish: false,
          inspect: true,
        },
        {
          beforeConnect: async (live) => {
            heapBefore = await heapUsedAfterGc(live.service.inspectorUrl);
            rssBefore =
              live.service.pid === undefined ? 0 : (readProcStat(live.service.pid)?.rssBytes ?? 0);
          },
          afterDrain: async (live) => {
            const heapAfter = await heapUsedAfterGc(live.service.inspectorUrl);
            const rssAfter =
              live.service.pid === undefined ? 0 : (readProcStat(live.service.pid)?.rssBytes ?? 0);
            const connected = live.subscribers.filter((s) => s.connected).length;
            const perConnectionKB = (bytes: number): number =>
              connected > 0 ? Math.round((bytes / connected / 1024) * 10) / 10 : 0;
            const gcForced = heapBefore !== undefined && heapAfter !== undefined;
            return {
              gcForced,
              rssBeforeBytes: rssBefore,
              rssAfterBytes: rssAfter,
              connected,
              rssPerConnectionKB: perConnectionKB(rssAfter - rssBefore),
              ...(heapBefore !== undefined && heapAfter !== undefined
                ? {
                    heapBeforeBytes: heapBefore,
                    heapAfterBytes: heapAfter,
                    heapPerConnectionKB: perConnectionKB(heapAfter - heapBefore),
                  }
                : {}),
            };
          },
        },
      );
    }),
};
