import { collectGarbage } from '../service/inspector-gc';
import { readProcStat } from '../sampling/proc-stat';
import { runTransport } from './run-transport';
import { anyTransport, perTransport, type Scenario } from './scenario';

/**
 * N subscribers, no events: service CPU, requests/s (long-poll hold timeouts cycling,
 * short-poll churn) and RSS per connection, measured after forced GCs before and after
 * the subscribers connect (seed 001's method; seed 000's idle table).
 */
export const idle: Scenario = {
  name: 'idle',
  description: 'N subscribers, no events: CPU, RSS per connection after GC, requests/s',
  supports: anyTransport,
  run: (ctx, o) =>
    perTransport(ctx, o.transports, async (transport) => {
      let rssBefore = 0;
      let gcBefore = false;
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
            gcBefore = await collectGarbage(live.service.inspectorUrl);
            rssBefore =
              live.service.pid === undefined ? 0 : (readProcStat(live.service.pid)?.rssBytes ?? 0);
          },
          afterDrain: async (live) => {
            const gcAfter = await collectGarbage(live.service.inspectorUrl);
            const rssAfter =
              live.service.pid === undefined ? 0 : (readProcStat(live.service.pid)?.rssBytes ?? 0);
            const connected = live.subscribers.filter((s) => s.connected).length;
            return {
              gcForced: gcBefore && gcAfter,
              rssBeforeBytes: rssBefore,
              rssAfterBytes: rssAfter,
              connected,
              rssPerConnectionKB:
                connected > 0
                  ? Math.round(((rssAfter - rssBefore) / connected / 1024) * 10) / 10
                  : 0,
            };
          },
        },
      );
    }),
};
