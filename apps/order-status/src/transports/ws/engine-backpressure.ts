import type { Socket } from 'socket.io';

/** engine.io's connection object, as socket.io exposes it (`socket.conn`). */
type EngineSocket = Socket['conn'];

/**
 * The part of engine.io's `Socket` (one client connection, `socket.conn`) that back-pressure
 * needs. `writeBuffer` is private in engine.io's typings but is what the engine itself
 * flushes; verified against engine.io 6.6 `build/socket.js`:
 * - `sendPacket()` pushes every outgoing packet onto `writeBuffer`, then calls `flush()`;
 * - `flush()` hands the whole buffer to the transport only while `transport.writable`, and
 *   right after `transport.send()` emits `'drain'` (so 'drain' means "writeBuffer emptied");
 * - the websocket transport is unwritable from `send()` until `ws.send()`'s callback, which
 *   fires once the frames reached the kernel (a reader that stops reading keeps it false);
 *   the polling transport is writable only while a GET is pending;
 * - the transport's 'ready' (and an upgrade completing) calls `flush()` again.
 */
interface EngineConnection {
  readonly writeBuffer: readonly unknown[];
  once(event: 'drain', listener: () => void): unknown;
  off(event: 'drain', listener: () => void): unknown;
}

/**
 * socket.io has no `write() === false`; this gives one connection that signal from the
 * engine's own buffer. A sink is "full" when at least `highWater` packets wait in
 * `writeBuffer`, and resumes on the engine's next 'drain'.
 *
 * Why not also treat `!transport.writable` as full: the websocket transport is unwritable
 * after every send until the kernel takes the bytes, and polling between two GETs. If the
 * sink paused then with an empty `writeBuffer`, the next `flush()` would find nothing to
 * send and emit no 'drain' (until a ping happened to be queued): a stall, and on polling one
 * event per round trip at best. A non-empty `writeBuffer` guarantees a flush, hence a
 * 'drain', as soon as the transport can take it (or the connection closes, which releases
 * every subscription).
 *
 * One instance per connection, shared by all its subscriptions: a single one-shot 'drain'
 * listener however many orders wait, and waiters resume in the order they paused.
 */
export class EngineBackpressure {
  private waiters: (() => void)[] = [];
  private listening = false;
  private closed = false;
  private readonly conn: EngineConnection;

  constructor(
    conn: EngineSocket,
    private readonly highWater: number,
  ) {
    if (!Number.isInteger(highWater) || highWater < 1) {
      throw new TypeError('highWater must be an integer >= 1');
    }
    this.conn = conn as unknown as EngineConnection;
    if (!Array.isArray(this.conn.writeBuffer)) {
      // A future engine.io that renames the buffer must fail loudly, not stall silently.
      throw new TypeError('engine.io Socket has no writeBuffer array: back-pressure cannot work');
    }
  }

  /** Packets the engine holds that the transport has not taken yet. */
  get buffered(): number {
    return this.conn.writeBuffer.length;
  }

  isFull(): boolean {
    return this.buffered >= this.highWater;
  }

  /** Calls `resume` once the engine has flushed its buffer. */
  whenDrained(resume: () => void): void {
    if (this.closed) return;
    this.waiters.push(resume);
    if (!this.listening) {
      this.listening = true;
      this.conn.once('drain', this.onDrain);
    }
  }

  /** The connection is gone: forget every waiter. */
  close(): void {
    this.closed = true;
    this.waiters = [];
    if (this.listening) this.conn.off('drain', this.onDrain);
    this.listening = false;
  }

  private readonly onDrain = (): void => {
    this.listening = false;
    const waiters = this.waiters;
    this.waiters = [];
    for (const resume of waiters) {
      if (this.closed) return;
      resume();
    }
  };
}
