import { Agent } from 'node:http';
import { createConnection, type NetConnectOpts } from 'node:net';

/** How often a batched socket is read by default: ~10 events of one order at 10 ev/s. */
export const DEFAULT_READ_BATCH_MS = 1_000;
/** The batcher's tick: each tick reads one slice of the sockets, not all of them at once. */
const TICK_MS = 10;

/**
 * What the batcher pauses and resumes: a socket (socket.io's, under ws), or an HTTP
 * response (SSE), which pauses its socket itself once it holds more than its high-water
 * mark (and resumes it on `resume()`; pausing the socket under it would be undone by the
 * response's next read).
 */
export interface BatchedReader {
  readonly destroyed: boolean;
  pause(): unknown;
  resume(): unknown;
  once(event: 'close', listener: () => void): unknown;
}

/**
 * Reads the sockets of subscribers whose latency is not measured in batches: each socket
 * is paused, and read once every `everyMs`, so one read takes every event that arrived
 * meanwhile instead of one read, one HTTP parse and one stream push per event.
 *
 * Why: at thousands of subscribers the generator, a Node process like the server, spent
 * about as much CPU per event as the bare server did per delivery, so it saturated first
 * and the scale climb measured the generator. A read costs the client the same whether it
 * carries one event or ten. The server writes the same: every event as it happens, taken
 * and acknowledged by the client's kernel (a few KB per socket, far inside the receive
 * window); only the client's read waits. The server's CPU per delivery reads a little
 * higher with batched clients, never lower (docs/performance-notes.md).
 * Latency is measured on the sampled subscribers, which read as events arrive.
 *
 * How a paused socket stops reading: `pause()` alone only stops 'data' events; Node keeps
 * reading the socket into the stream's buffer until it holds `readableHighWaterMark`
 * bytes. The batched sockets are made with a high-water mark of one byte
 * (`batchedAgent()`; an HTTP response takes its socket's), so a paused socket or response
 * reads at most one more chunk, and `resume()` starts the read that takes everything
 * queued in the kernel.
 *
 * The sockets are spread over `everyMs / TICK_MS` slices, one slice read per tick, so the
 * generator's loop never stalls on a burst of every socket at once (which would delay
 * the sampled subscribers' reads and show up in the latency they measure).
 */
export class ReadBatcher {
  private readonly slices: Set<BatchedReader>[];
  private readonly held = new WeakSet<BatchedReader>();
  private next = 0;
  private tick = 0;
  private readonly timer: NodeJS.Timeout;
  private stopped = false;

  constructor(readonly everyMs = DEFAULT_READ_BATCH_MS) {
    if (!Number.isInteger(everyMs) || everyMs < TICK_MS) {
      throw new RangeError(`a read batch is a whole number of ms, at least ${TICK_MS}`);
    }
    this.slices = Array.from(
      { length: Math.round(everyMs / TICK_MS) },
      () => new Set<BatchedReader>(),
    );
    this.timer = setInterval(() => this.readSlice(), TICK_MS);
    this.timer.unref();
  }

  /** From now on `reader` is read once per batch; it leaves the batcher when it closes. */
  add(reader: BatchedReader): void {
    if (this.stopped || reader.destroyed || this.held.has(reader)) return;
    this.held.add(reader);
    const slice = this.slices[this.next++ % this.slices.length];
    slice.add(reader);
    reader.once('close', () => slice.delete(reader));
    reader.pause();
  }

  /** Stops batching: every socket still held reads as events arrive again. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    for (const slice of this.slices) {
      for (const reader of slice) reader.resume();
      slice.clear();
    }
  }

  /** The readers held. */
  readers(): BatchedReader[] {
    return this.slices.flatMap((s) => [...s]);
  }

  get size(): number {
    return this.slices.reduce((n, s) => n + s.size, 0);
  }

  private readSlice(): void {
    const slice = this.slices[this.tick++ % this.slices.length];
    if (slice.size === 0) return;
    for (const reader of slice) reader.resume();
    // The reads happen in the loop's poll phase; pause again right after it.
    setImmediate(() => {
      if (this.stopped) return;
      for (const reader of slice) reader.pause();
    });
  }
}

/**
 * An HTTP agent (keep-alive, no socket cap, like the eager one) whose sockets stop
 * reading as soon as they are paused: see ReadBatcher. Used for the batched subscribers'
 * SSE requests and socket.io's WebSocket upgrade.
 */
export function batchedAgent(): Agent {
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity, scheduling: 'lifo' });
  // net.Socket hands its options to stream.Duplex, which takes the high-water mark; the
  // connect options' type does not list it. Returned at once, the agent takes the socket
  // as it takes net.createConnection's.
  agent.createConnection = (options) =>
    createConnection({ ...options, readableHighWaterMark: 1 } as NetConnectOpts);
  return agent;
}
