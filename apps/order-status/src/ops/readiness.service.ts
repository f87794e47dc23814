import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { StreamStore } from '@app/store';
import { AUTH_STATE, type AuthState } from '../auth/auth-state';

/** Where the instance is in its life: only `ready` takes traffic. */
export type Phase = 'starting' | 'ready' | 'draining';

export interface ReadinessState {
  readonly ready: boolean;
  readonly phase: Phase;
  /** False while the store is unreachable (e.g. a Redis outage). */
  readonly storeUp: boolean;
  /** False while tickets and limits cannot be checked (their Redis connection is down). */
  readonly authStateUp: boolean;
}

/** @default 1_000 ms between store health reads while ready, for push-style watchers */
export const READINESS_POLL_MS = 1_000;

/**
 * Whether this instance should receive new connections: not while starting (listeners
 * bound but the simulator or the store feed not yet up), not while draining for
 * shutdown, not while the store is down (publishes would fail and resumes could not
 * be served from shared history), and not while the shared auth state is (every
 * ticket, connection-slot and rate-limit check would answer 503). Liveness is separate: a store outage must not get the
 * process restarted, only taken out of rotation.
 *
 * HTTP probes read `state()` on demand; the gRPC health service is push-based (`Watch`),
 * so listeners are told about every change, store outages included (polled while ready).
 */
@Injectable()
export class Readiness implements OnModuleDestroy {
  private readonly logger = new Logger('Readiness');
  private readonly listeners = new Set<(ready: boolean) => void>();
  private phase: Phase = 'starting';
  private lastReady = false;
  private timer?: NodeJS.Timeout;

  constructor(
    @Inject(StreamStore) private readonly store: StreamStore,
    @Inject(AUTH_STATE) private readonly authState: AuthState,
  ) {}

  state(): ReadinessState {
    const storeUp = (this.store.health?.() ?? 'up') === 'up';
    const authStateUp = (this.authState.health?.() ?? 'up') === 'up';
    return {
      ready: this.phase === 'ready' && storeUp && authStateUp,
      phase: this.phase,
      storeUp,
      authStateUp,
    };
  }

  /** Start-up is complete: listeners bound, bus fed, simulator started. */
  markReady(): void {
    if (this.phase !== 'starting') return;
    this.phase = 'ready';
    this.timer = setInterval(() => this.publish(), READINESS_POLL_MS);
    this.timer.unref();
    this.publish();
  }

  /** Shutdown has begun: never ready again. */
  beginDrain(): void {
    this.phase = 'draining';
    clearInterval(this.timer);
    this.publish();
  }

  /** Calls `listener(ready)` now and on every change; returns the unsubscribe function. */
  onChange(listener: (ready: boolean) => void): () => void {
    this.listeners.add(listener);
    listener(this.lastReady);
    return () => this.listeners.delete(listener);
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  private publish(): void {
    const { ready, phase, storeUp, authStateUp } = this.state();
    if (ready === this.lastReady) return;
    this.lastReady = ready;
    const up = (b: boolean) => (b ? 'up' : 'down');
    this.logger.log(
      `${ready ? 'ready' : 'not ready'} (phase ${phase}, store ${up(storeUp)}, auth state ${up(authStateUp)})`,
    );
    for (const listener of this.listeners) listener(ready);
  }
}
