import { LatencyRecorder, epochUs } from '../stats/latency';
import { Counter } from '../stats/distribution';
import { SeqTracker } from '../stats/seq-tracker';
import type { Connector, OpenStream } from './transport';
import type { WireEvent } from './wire-types';

/** Bounds the reconnect loop of one subscriber, so a dead service cannot spin it forever. */
export const DEFAULT_MAX_RECONNECTS = 200;
/** Pause before reconnecting after an error (not after a clean `end`, which resumes at once). */
export const RECONNECT_BACKOFF_MS = 100;

/** Shared by every subscriber of one run. */
export class RunMetrics {
  readonly latency = new LatencyRecorder();
  readonly errors = new Counter();
  readonly ends = new Counter();
  readonly connectMs: number[] = [];
  readonly reconnectMs: number[] = [];
  /** Events published before this instant (setup, replays) are not latency samples. */
  measureFromUs = Number.POSITIVE_INFINITY;
  /** The measured window's end (publishing stopped). */
  measureToUs = Number.POSITIVE_INFINITY;
  delivered = 0;
  /**
   * Events published inside the measured window, whenever they were read: what the
   * server delivered in that window. Counted by publish time, not arrival, so that a
   * subscriber reading in batches (ReadBatcher) adds neither the backlog it reads just
   * after the window opens nor misses the one it reads after it closes.
   */
  deliveredInWindow = 0;
}

export interface SubscriberOptions {
  /** Reconnect (resuming from the last seq) when a stream ends or fails. @default true */
  readonly reconnect?: boolean;
  /** @default DEFAULT_MAX_RECONNECTS */
  readonly maxReconnects?: number;
  /**
   * Record this subscriber's publish-to-receive latency. A run measures latency on a
   * sample of its subscribers (the clock read and histogram update per event are the
   * generator's cost) while every subscriber counts its seqs. @default true
   */
  readonly measureLatency?: boolean;
  /** Called for every new event (after de-duplication). */
  readonly onEvent?: (event: WireEvent) => void;
}

/**
 * One simulated client following one order: tracks seqs, records latency, and resumes
 * from its last seq after a stream ends (max age, shutdown) or fails, as the design's
 * resume guarantee says every client should.
 */
export class Subscriber {
  readonly tracker: SeqTracker;
  connected = false;
  reconnects = 0;
  private stream?: OpenStream;
  private stopped = false;
  private openedAt = 0;
  private disconnectedAt: number | undefined;
  private everOpened = false;
  private retryTimer?: NodeJS.Timeout;
  private readyWaiters: (() => void)[] = [];

  constructor(
    readonly orderId: string,
    afterSeq: number,
    private readonly connector: Connector,
    private readonly metrics: RunMetrics,
    private readonly options: SubscriberOptions = {},
  ) {
    this.tracker = new SeqTracker(afterSeq);
  }

  start(): void {
    // One stream at a time: a forced reconnect may land between a server `end` and the
    // resume it scheduled, and two live streams would deliver every event twice.
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.stream?.close();
    this.openedAt = performance.now();
    this.stream = this.connector.open(this.orderId, this.tracker.highestSeq, {
      onOpen: () => this.onOpen(),
      onEvent: (e) => this.onEvent(e),
      onReset: (r) => this.tracker.reset(r.lastSeq),
      onSkipped: (s) => this.tracker.skip(s.fromSeq, s.toSeq),
      onEnd: (reason) => this.onClosed(`end:${reason}`, reason === 'completed'),
      onError: (code) => this.onClosed(code, false),
    });
  }

  /** Resolves when the first stream is open (or never, if it fails: callers bound the wait). */
  ready(): Promise<void> {
    if (this.everOpened) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  /** Drops the connection from the client side and resumes at once (reconnect scenario). */
  forceReconnect(): void {
    if (this.stopped) return;
    this.stream?.close();
    this.connected = false;
    this.disconnectedAt = performance.now();
    this.metrics.ends.add('client_forced');
    this.reconnects += 1;
    this.start();
  }

  pause(): void {
    this.stream?.pause?.();
  }

  resume(): void {
    this.stream?.resume?.();
  }

  stop(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.stream?.close();
    this.connected = false;
  }

  private onOpen(): void {
    const now = performance.now();
    this.connected = true;
    if (!this.everOpened) {
      this.everOpened = true;
      this.metrics.connectMs.push(now - this.openedAt);
      for (const w of this.readyWaiters.splice(0)) w();
    } else if (this.disconnectedAt !== undefined) {
      this.metrics.reconnectMs.push(now - this.disconnectedAt);
    }
    this.disconnectedAt = undefined;
  }

  private onEvent(e: WireEvent): void {
    if (!this.tracker.observe(e.seq)) return;
    this.metrics.delivered += 1;
    if (
      e.publishedAtUs >= this.metrics.measureFromUs &&
      e.publishedAtUs < this.metrics.measureToUs
    ) {
      this.metrics.deliveredInWindow += 1;
    }
    if (this.options.measureLatency !== false && e.publishedAtUs >= this.metrics.measureFromUs) {
      this.metrics.latency.recordUs(epochUs() - e.publishedAtUs);
    }
    this.options.onEvent?.(e);
  }

  private onClosed(why: string, final: boolean): void {
    this.connected = false;
    if (why.startsWith('end:')) this.metrics.ends.add(why.slice(4));
    else this.metrics.errors.add(why);
    if (this.stopped || final || this.options.reconnect === false) return;
    if (this.reconnects >= (this.options.maxReconnects ?? DEFAULT_MAX_RECONNECTS)) return;
    this.reconnects += 1;
    this.disconnectedAt ??= performance.now();
    const delay = why.startsWith('end:') ? 0 : RECONNECT_BACKOFF_MS;
    this.retryTimer = setTimeout(() => {
      if (!this.stopped) this.start();
    }, delay);
  }
}
