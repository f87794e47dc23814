import { OtlpSink } from '../ladder/otlp-sink';
import { withExportedSpans } from '../ladder/exported-spans';
import { runnableRungs, samplingRatio } from '../ladder/rungs';
import type { RunResult } from './result';
import { runTransport } from './run-transport';
import { steadyLoad } from './steady';
import { perTransport, type Scenario } from './scenario';

export const LADDER_TRANSPORTS = ['grpc', 'sse', 'ws', 'websocket', 'longpoll'];

/**
 * Rounds of the whole ladder per transport. As in overhead: one fresh process's CPU per
 * event moves by more than most layers cost, so the report takes medians of rounds and
 * the marginal cost of a layer from rungs that ran one after the other in a round.
 */
export const LADDER_ROUNDS = 3;

/**
 * What each layer of a production stack costs, per transport, in one build: the same
 * steady load on bare Node, the framework floors (long-poll), then the service with its
 * layers switched on one at a time (loadtest/src/ladder/rungs.ts). Rounds run every rung
 * in order (ABAB...), so a host that drifts moves all of them alike.
 */
export const ladder: Scenario = {
  name: 'ladder',
  description: 'the cost of each middleware layer: bare Node, Fastify, NestJS, + each layer',
  supports: (t) => LADDER_TRANSPORTS.includes(t),
  run: (ctx, o) =>
    perTransport(ctx, o.transports.filter(ladder.supports), async (transport) => {
      const out: RunResult[] = [];
      const rounds = o.rounds ?? (o.tiny ? 1 : LADDER_ROUNDS);
      const rungs = runnableRungs(transport, o.tiny, o.rungs);
      const orders = o.orders?.[0];
      const sink = rungs.some((r) => r.exportsSpans) ? await OtlpSink.start() : undefined;
      try {
        for (let round = 1; round <= rounds && !ctx.aborted(); round += 1) {
          for (const rung of rungs) {
            if (ctx.aborted()) break;
            sink?.take();
            const r = await runTransport(ctx, {
              scenario: 'ladder',
              variant: rung.label,
              server: rung.server,
              env:
                rung.exportsSpans && sink
                  ? { ...rung.env, OTEL_EXPORTER_OTLP_ENDPOINT: sink.url }
                  : rung.env,
              transport,
              ...steadyLoad(o, { subscribers: 500, durationS: 5 }, transport),
              ...(orders === undefined ? {} : { orders }),
            });
            const run = {
              ...r,
              extra: {
                ...r.extra,
                round,
                rung: rung.id,
                ...(orders === undefined ? {} : { orders }),
              },
            };
            out.push(
              rung.exportsSpans && sink
                ? withExportedSpans(run, sink.take(), samplingRatio(rung), publishesOf(r))
                : run,
            );
          }
        }
      } finally {
        await sink?.close();
      }
      return out;
    }),
};

/** The publishes of a run's measured window: each of its orders' events, once. */
function publishesOf(r: RunResult): number {
  const { subscribers } = r.settings;
  const orders = Math.min(Number(r.extra?.orders ?? subscribers), subscribers);
  return subscribers > 0 ? (r.events.expected * orders) / subscribers : 0;
}
