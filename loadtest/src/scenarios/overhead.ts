import { runTransport } from './run-transport';
import { PADDING_FOR_117_BYTES } from './steady';
import { perTransport, type Scenario, warmupOf } from './scenario';

export const OVERHEAD_TRANSPORTS = ['grpc', 'sse', 'ws', 'longpoll'] as const;

/**
 * The same steady load against the Nest service and against a bare Node server with the
 * same wire format (loadtest/src/bare), so the difference in service CPU per 1,000 events
 * and RSS is what the framework (and the service's bus, queues and guards) costs.
 */
export const overhead: Scenario = {
  name: 'overhead',
  description: 'the same load on the Nest service and on a bare Node server',
  supports: (t) => (OVERHEAD_TRANSPORTS as readonly string[]).includes(t),
  run: (ctx, o) =>
    perTransport(ctx, o.transports.filter(overhead.supports), async (transport) => {
      const out = [];
      for (const server of ['nest', 'bare'] as const) {
        out.push(
          await runTransport(ctx, {
            scenario: 'overhead',
            variant: server === 'bare' ? 'bare node' : 'nest',
            server,
            transport,
            subscribers: o.subscribers ?? (o.tiny ? 4 : 500),
            ratePerOrder: o.rate ?? 10,
            durationS: o.durationS ?? (o.tiny ? 2 : 6),
            warmupS: warmupOf(o),
            payloadBytes: o.payloadBytes ?? PADDING_FOR_117_BYTES,
          }),
        );
      }
      return out;
    }),
};
