import { Inject, Injectable } from '@nestjs/common';
import {
  assertMayRead,
  authFailureReason,
  authorizeRead,
  ConnectionLimiter,
  missingCredentials,
  orderNotFound,
  parseBearer,
  Scope,
  SCOPES,
  TokenVerifier,
  type Principal,
  type ReleaseSlot,
} from '@app/auth';
import type { DomainSnapshot } from '@app/contracts';
import { StreamStore, type StreamOwnership } from '@app/store';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { MetricsService } from '../ops/metrics.service';

/**
 * Who every caller is with the auth layer off (`BENCHMARK_LAYERS_OFF=auth`, refused in
 * production): one principal that may read and publish every order and never expires.
 */
const BENCHMARK_PRINCIPAL: Principal = {
  subject: 'benchmark',
  scopes: new Set<Scope>(SCOPES),
  expiresAtMs: Number.MAX_SAFE_INTEGER,
};

/**
 * The one authentication and per-order authorization path every transport calls: HTTP
 * (guard + handlers), socket.io (handshake middleware + `subscribe`), gRPC (metadata).
 * Order: who are you (Unauthenticated), may you read orders at all (PermissionDenied),
 * is the order there and yours (NotFound either way, so ids cannot be probed), then the
 * per-principal connection limit (ResourceExhausted). Every refusal for credentials is
 * counted in `order_auth_failures_total{transport, reason}`; `transport` is the label
 * the caller gives the bus (`sse`, `long-poll`, `grpc`, `ws`) or `http`.
 */
@Injectable()
export class AuthService {
  constructor(
    @Inject(TokenVerifier) private readonly verifier: TokenVerifier,
    @Inject(StreamStore) private readonly store: StreamStore,
    @Inject(ConnectionLimiter) private readonly limiter: ConnectionLimiter,
    @Inject(MetricsService) private readonly metrics: MetricsService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.bypass = config.benchmark.auth ? undefined : BENCHMARK_PRINCIPAL;
  }

  /** The one principal while the auth layer is off (benchmark only), else undefined. */
  private readonly bypass: Principal | undefined;

  /** @throws GatewayError Unauthenticated for a missing or invalid token. */
  async authenticate(token: string | undefined, transport: string): Promise<Principal> {
    if (this.bypass !== undefined) return this.bypass;
    try {
      if (token === undefined) throw missingCredentials();
      return await this.verifier.verify(token);
    } catch (err) {
      this.recordFailure(transport, err);
      throw err;
    }
  }

  /** `Authorization: Bearer <token>` (HTTP header or gRPC metadata value). */
  async authenticateHeader(
    header: string | readonly string[] | undefined,
    transport: string,
  ): Promise<Principal> {
    return this.authenticateHeaderNow(header, transport);
  }

  /**
   * authenticate() without a promise when it can do without: the principal itself for a
   * token verified recently (TokenVerifier.recall), else authenticate()'s promise. Never
   * throws; a failure is the promise's rejection. For the HTTP guard, which runs on
   * every request, so a poll does not pay for a promise chain it does not need.
   */
  authenticateNow(token: string | undefined, transport: string): Principal | Promise<Principal> {
    if (this.bypass !== undefined) return this.bypass;
    return (
      (token === undefined ? undefined : this.verifier.recall(token)) ??
      this.authenticate(token, transport)
    );
  }

  /** authenticateHeader() as authenticateNow(): the principal itself when it can. */
  authenticateHeaderNow(
    header: string | readonly string[] | undefined,
    transport: string,
  ): Principal | Promise<Principal> {
    if (this.bypass !== undefined) return this.bypass;
    let token: string | undefined;
    try {
      token = parseBearer(header);
    } catch (err) {
      return this.refuse(transport, err);
    }
    return this.authenticateNow(token, transport);
  }

  /** A refusal as a rejection, counted like every other. */
  private async refuse(transport: string, err: unknown): Promise<never> {
    this.recordFailure(transport, err);
    throw err;
  }

  /**
   * Checks that `principal` may read `orderId`, against the owner the store keeps with
   * the order (the store, not the bus, is where ownership lives). Runs on every subscribe
   * and every resume, whatever the transport.
   * @throws GatewayError PermissionDenied (no read scope), NotFound (missing or not
   *   yours, alike), or the store's Unavailable.
   */
  async authorizeRead(
    principal: Principal,
    orderId: string,
    transport: string,
  ): Promise<DomainSnapshot> {
    try {
      // Before the lookup: a token that may read nothing learns nothing about which ids exist.
      assertMayRead(principal);
      const snapshot = await this.store.getSnapshot(orderId);
      if (this.bypass !== undefined) return orderExists(orderId, snapshot);
      mayReadOrder(principal, orderId, snapshot);
      return snapshot;
    } catch (err) {
      this.recordFailure(transport, err);
      throw err;
    }
  }

  /**
   * `authorizeRead` for opening a stream or answering a poll, which need the verdict
   * only: the store is asked for the owner, not the snapshot (the in-process store then
   * builds nothing, once per long-poll answer).
   */
  async authorizeSubscribe(
    principal: Principal,
    orderId: string,
    transport: string,
  ): Promise<void> {
    try {
      assertMayRead(principal);
      const ownership = await this.store.getOwnership(orderId);
      if (this.bypass !== undefined) orderExists(orderId, ownership);
      else mayReadOrder(principal, orderId, ownership);
    } catch (err) {
      this.recordFailure(transport, err);
      throw err;
    }
  }

  /**
   * Counts `err` in `order_auth_failures_total` when it is an auth failure (see
   * AuthFailureReason); anything else (a missing order, the store down) is not.
   */
  recordFailure(transport: string, err: unknown): void {
    const reason = authFailureReason(err);
    if (reason !== undefined) this.metrics.authFailures.inc({ transport, reason });
  }

  /**
   * Takes one of the principal's connection slots for an open stream; call the returned
   * function when it closes. Synchronous with the in-process limiter, a promise with the
   * shared (Redis) one.
   * @throws GatewayError ResourceExhausted over the limit, Unavailable when the shared
   *   count cannot be reached.
   */
  acquireConnection(principal: Principal): ReleaseSlot | Promise<ReleaseSlot> {
    return this.limiter.acquire(principal.subject);
  }
}

/** The read check once the order is looked up (`undefined`: it does not exist). */
function mayReadOrder<T extends StreamOwnership>(
  principal: Principal,
  orderId: string,
  order: T | undefined,
): asserts order is T {
  if (order === undefined) throw orderNotFound(orderId, false);
  authorizeRead(principal, orderId, order.ownerId);
}

/** With the auth layer off an order is still looked up: a missing one is NotFound. */
function orderExists<T>(orderId: string, order: T | undefined): T {
  if (order === undefined) throw orderNotFound(orderId, false);
  return order;
}
