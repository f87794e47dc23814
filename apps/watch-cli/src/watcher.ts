import {
  nowUs,
  type OrderStatusChanged,
  type StreamReset,
  type StreamSkipped,
} from '@app/contracts';
import type { Connect } from './connection';

/** @default 250 ms first reconnect delay (full jitter, doubling) */
export const RECONNECT_BASE_MS = 250;
/** @default 5_000 ms longest reconnect delay */
export const RECONNECT_MAX_MS = 5_000;

export interface WatchOutput {
  line(text: string): void;
}

/**
 * Follows one order through any transport: prints each event with its latency, keeps the
 * last seq, and after every disconnect reconnects with that seq as the resume point
 * (after the server's advice when it gave one, else a jittered exponential backoff, so
 * many watchers of one restarted server do not come back together).
 * Resolves once the order is finished or `signal` is aborted.
 */
export async function watch(
  connect: Connect,
  opts: { orderId: string; transport: string; after: number },
  out: WatchOutput,
  signal: AbortSignal,
): Promise<void> {
  let lastSeq = opts.after;
  let attempt = 0;
  let connections = 0;
  const time = () => new Date().toISOString().slice(11, 23);
  const handlers = {
    opened: () => {
      connections++;
      attempt = 0;
      out.line(
        connections === 1
          ? `${time()}  connected to ${opts.orderId} over ${opts.transport}${lastSeq > 0 ? `, after seq ${lastSeq}` : ''}`
          : `${time()}  resumed after seq ${lastSeq}`,
      );
    },
    event: (e: OrderStatusChanged) => {
      if (e.seq <= lastSeq) return; // never printed twice, whatever a server replays
      const latencyMs = Math.max(0, nowUs() - e.publishedAtUs) / 1000;
      out.line(
        `${time()}  #${String(e.seq).padEnd(5)} ${e.status.padEnd(17)} ${latencyMs.toFixed(1).padStart(8)} ms`,
      );
      lastSeq = e.seq;
    },
    reset: (r: StreamReset) => {
      out.line(
        `${time()}  reset (${r.reason}): now ${r.snapshot.status} at seq ${r.snapshot.lastSeq}`,
      );
      lastSeq = r.snapshot.lastSeq;
    },
    skipped: (s: StreamSkipped) => {
      if (s.toSeq <= lastSeq) return;
      // The service kept up and this watcher did not: it says so instead of leaving a gap.
      out.line(
        `${time()}  skipped #${s.fromSeq}..#${s.toSeq} (${s.reason}): read too slowly, continuing`,
      );
      lastSeq = s.toSeq;
    },
  };

  while (!signal.aborted) {
    let delayMs: number;
    try {
      const end = await connect(lastSeq, handlers, signal);
      if (end.reason === 'completed') {
        out.line(`${time()}  order finished (seq ${lastSeq})`);
        return;
      }
      delayMs = end.retryAfterMs ?? backoff(attempt++);
      out.line(
        `${time()}  stream ended (${end.reason}); reconnecting in ${Math.round(delayMs)} ms`,
      );
    } catch (err) {
      if (signal.aborted) return;
      delayMs = backoff(attempt++);
      const why = err instanceof Error ? err.message : String(err);
      out.line(`${time()}  connection lost (${why}); retrying in ${Math.round(delayMs)} ms`);
    }
    await sleep(delayMs, signal);
  }
}

function backoff(attempt: number): number {
  return Math.random() * Math.min(RECONNECT_MAX_MS, RECONNECT_BASE_MS * 2 ** attempt);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
