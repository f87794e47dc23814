import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import {
  assertValidMax,
  ConnectionLimiter,
  connectionLimitExceeded,
  DEFAULT_CONNECTION_LEASE_MS,
  type ReleaseSlot,
} from '@app/auth';
import { ErrorCode, GatewayError } from '@app/contracts';
import { unavailableOnFailure, type RedisClient } from '../redis-client';
import type { AuthStateKeys } from './auth-state-keys';
import {
  ACQUIRE_CONNECTION_SCRIPT,
  REFRESH_CONNECTIONS_SCRIPT,
  RELEASE_CONNECTION_SCRIPT,
} from './auth-state-scripts';

/** Subjects renewed at once: bounds the commands in flight on a renewal round. */
const REFRESH_BATCH = 100;
/** @default 1_000 ms for close() to remove this instance's counts before giving up */
const CLOSE_TIMEOUT_MS = 1_000;

export interface RedisConnectionLimiterOptions {
  /** 0: unlimited (nothing is counted at all). */
  readonly max: number;
  /** How long an instance's counts outlive its last renewal. @default 30_000 */
  readonly leaseMs?: number;
  /** This instance's name in the counts. @default a random UUID */
  readonly instanceId?: string;
}

/** What this instance holds for one subject. */
interface Held {
  /** Slots Redis granted and not yet given back. */
  held: number;
  /** Acquires sent and not yet answered. */
  pending: number;
}

const noop: ReleaseSlot = () => undefined;

/**
 * Per-principal connection counts across every instance, in Redis. Each subject has a
 * hash with one count per instance and that instance's lease (see
 * ACQUIRE_CONNECTION_SCRIPT): the acquire script sums the live instances' counts and
 * takes the slot in one step, so concurrent acquires on several instances never exceed
 * the limit. Every `leaseMs / 3` the instance renews its lease on each subject it holds
 * slots for, and sets its count there to what it really holds, which repairs a release
 * lost in an outage. An instance that dies stops renewing: its counts stop counting one
 * lease later, and are removed by the next acquire for that subject.
 *
 * Redis unreachable: acquire rejects with Unavailable within the command timeout; a
 * release is sent best effort (the next renewal corrects the count).
 */
export class RedisConnectionLimiter extends ConnectionLimiter {
  readonly max: number;
  readonly leaseMs: number;
  readonly instanceId: string;
  private readonly local = new Map<string, Held>();
  private readonly logger = new Logger('RedisConnectionLimiter');
  private readonly timer: NodeJS.Timeout;
  private refreshing = false;
  private closed = false;

  constructor(
    private readonly client: RedisClient,
    private readonly keys: AuthStateKeys,
    opts: RedisConnectionLimiterOptions,
  ) {
    super();
    assertValidMax(opts.max);
    this.max = opts.max;
    this.leaseMs = opts.leaseMs ?? DEFAULT_CONNECTION_LEASE_MS;
    if (!Number.isInteger(this.leaseMs) || this.leaseMs < 3) {
      throw new TypeError('leaseMs must be an integer >= 3');
    }
    this.instanceId = opts.instanceId ?? randomUUID();
    this.timer = setInterval(() => void this.refresh(), Math.floor(this.leaseMs / 3));
    this.timer.unref();
  }

  /** Slots this instance holds for `subject` (granted by Redis, not yet given back). */
  heldBy(subject: string): number {
    return this.local.get(subject)?.held ?? 0;
  }

  async acquire(subject: string): Promise<ReleaseSlot> {
    if (this.max === 0) return noop;
    if (this.closed) throw new GatewayError(ErrorCode.Unavailable, 'connection limits closed');
    const entry = this.entry(subject);
    entry.pending++;
    let taken: boolean;
    try {
      const [ok] = await unavailableOnFailure('connection limits', () =>
        ACQUIRE_CONNECTION_SCRIPT.run(
          this.client,
          [this.keys.connections(subject)],
          [this.instanceId, this.max, this.leaseMs],
        ),
      );
      taken = ok === 1;
    } finally {
      entry.pending--;
    }
    if (!taken) {
      this.forgetIfIdle(subject, entry);
      throw connectionLimitExceeded(this.max);
    }
    entry.held++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      entry.held--;
      this.forgetIfIdle(subject, entry);
      if (this.closed) return;
      RELEASE_CONNECTION_SCRIPT.run(
        this.client,
        [this.keys.connections(subject)],
        [this.instanceId],
      ).catch((err: unknown) => this.logger.debug?.(`release not recorded: ${String(err)}`));
    };
  }

  /**
   * Renews this instance's lease on every subject it holds slots for (and sets its true
   * count there). Public for tests; runs on its own every `leaseMs / 3`.
   */
  async refresh(): Promise<void> {
    if (this.refreshing || this.closed) return;
    this.refreshing = true;
    try {
      const subjects = [...this.local.entries()];
      for (let i = 0; i < subjects.length; i += REFRESH_BATCH) {
        await Promise.all(
          subjects.slice(i, i + REFRESH_BATCH).map(([subject, e]) =>
            // While an acquire is in flight the local count is not final: renew only.
            this.renew(subject, e.pending > 0 ? -1 : e.held),
          ),
        );
      }
    } finally {
      this.refreshing = false;
    }
  }

  /**
   * Stops renewing and removes this instance's counts (bounded: a Redis that does not
   * answer lets them expire with the lease instead).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    const subjects = [...this.local.keys()];
    this.local.clear();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(subjects.map((s) => this.renew(s, 0))),
      new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_TIMEOUT_MS))),
    ]);
    clearTimeout(timer);
  }

  private renew(subject: string, count: number): Promise<void> {
    return REFRESH_CONNECTIONS_SCRIPT.run(
      this.client,
      [this.keys.connections(subject)],
      [this.instanceId, count, this.leaseMs],
    ).then(
      () => undefined,
      (err: unknown) => this.logger.debug?.(`lease not renewed: ${String(err)}`),
    );
  }

  private entry(subject: string): Held {
    let e = this.local.get(subject);
    if (e === undefined) {
      e = { held: 0, pending: 0 };
      this.local.set(subject, e);
    }
    return e;
  }

  private forgetIfIdle(subject: string, entry: Held): void {
    if (entry.held <= 0 && entry.pending <= 0 && this.local.get(subject) === entry) {
      this.local.delete(subject);
    }
  }
}
