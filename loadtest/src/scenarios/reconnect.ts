import { runTransport } from './run-transport';
import { defaultPayloadBytes } from './steady';
import { isStreaming, perTransport, type Scenario } from './scenario';

/** Service-side maximum stream age for this scenario, so the server ends streams too. */
export const RECONNECT_MAX_STREAM_AGE_MS = 2_000;

/**
 * Streams ended by the server (a short maximum stream age) and forced client disconnects
 * (a tenth of the subscribers each second): every subscriber resumes from its last seq,
 * so lost and duplicates must both be 0; reconnect time is from drop to stream open.
 */
export const reconnect: Scenario = {
  name: 'reconnect',
  description: 'server-ended streams and forced client disconnects: reconnect time, loss, dups',
  supports: (t) => isStreaming(t) || t === 'longpoll' || t === 'longpoll-h2',
  run: (ctx, o) =>
    perTransport(ctx, o.transports.filter(reconnect.supports), (transport) =>
      runTransport(
        ctx,
        {
          scenario: 'reconnect',
          variant: '',
          transport,
          subscribers: o.subscribers ?? (o.tiny ? 5 : 200),
          ratePerOrder: o.rate ?? 10,
          durationS: o.durationS ?? (o.tiny ? 3 : 8),
          payloadBytes: o.payloadBytes ?? defaultPayloadBytes(transport),
          env: {
            STREAM_MAX_AGE_MS: String(RECONNECT_MAX_STREAM_AGE_MS),
            STREAM_MAX_AGE_JITTER_MS: '500',
          },
        },
        {
          tick: (live) => {
            const n = Math.max(1, Math.floor(live.subscribers.length / 10));
            const offset = Math.floor(Math.random() * live.subscribers.length);
            for (let k = 0; k < n; k += 1)
              live.subscribers[(offset + k) % live.subscribers.length].forceReconnect();
          },
          afterDrain: async (live) => ({
            reconnects: live.subscribers.reduce((a, s) => a + s.reconnects, 0),
          }),
        },
      ),
    ),
};
