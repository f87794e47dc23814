import { Inject, Injectable } from '@nestjs/common';
import {
  authorizeRead,
  ConnectionLimiter,
  missingCredentials,
  parseBearer,
  TokenVerifier,
  type Principal,
} from '@app/auth';
import { ErrorCode, GatewayError, type OrderSnapshot } from '@app/contracts';
import { OrderStore } from '@app/event-bus';

/**
 * The one authentication and per-order authorization path every transport calls: HTTP
 * (guard + handlers), socket.io (handshake middleware + `subscribe`), gRPC (metadata).
 * Order: who are you (Unauthenticated), does the order exist (NotFound), is it yours
 * (PermissionDenied), then the per-principal connection limit (ResourceExhausted).
 */
@Injectable()
export class AuthService {
  constructor(
    @Inject(TokenVerifier) private readonly verifier: TokenVerifier,
    @Inject(OrderStore) private readonly store: OrderStore,
    @Inject(ConnectionLimiter) private readonly limiter: ConnectionLimiter,
  ) {}

  /** @throws GatewayError Unauthenticated for a missing or invalid token. */
  async authenticate(token: string | undefined): Promise<Principal> {
    if (token === undefined) throw missingCredentials();
    return this.verifier.verify(token);
  }

  /** `Authorization: Bearer <token>` (HTTP header or gRPC metadata value). */
  async authenticateHeader(header: string | readonly string[] | undefined): Promise<Principal> {
    return this.authenticate(parseBearer(header));
  }

  /**
   * Checks that `principal` may read `orderId`, against the owner the store keeps with
   * the order (the store, not the bus, is where ownership lives). Runs on every subscribe
   * and every resume, whatever the transport.
   * @throws GatewayError NotFound, PermissionDenied (or the store's Unavailable).
   */
  async authorizeRead(principal: Principal, orderId: string): Promise<OrderSnapshot> {
    const snapshot = await this.store.getSnapshot(orderId);
    if (snapshot === undefined) {
      throw new GatewayError(ErrorCode.NotFound, `order ${orderId} not found`);
    }
    authorizeRead(principal, orderId, snapshot.ownerId);
    return snapshot;
  }

  /**
   * Takes one of the principal's connection slots for an open stream; call the returned
   * function when it closes. @throws GatewayError ResourceExhausted over the limit.
   */
  acquireConnection(principal: Principal): () => void {
    return this.limiter.acquire(principal.subject);
  }
}
