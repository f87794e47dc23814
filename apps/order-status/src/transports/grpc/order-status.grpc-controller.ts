import { Controller, Inject, UseFilters } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import type { Metadata } from '@grpc/grpc-js';
import type { Observable } from 'rxjs';
import type { Principal } from '@app/auth';
import { EXPECTED_DOMAIN_METADATA } from '@app/contracts';
import { StreamEventBus } from '@app/event-bus';
import { AuthService } from '../../auth/auth.service';
import { ConnectionObserver } from '../../connections/connection-observer';
import { StreamConnections } from '../../connections/stream-connections.service';
import { authenticateCall } from './grpc-authenticate';
import { GrpcExceptionFilter } from './grpc-exception.filter';
import { GRPC_SERVICE, type SubscribeCall, type SubscribeRequest } from './grpc-messages';
import { subscribeStream } from './subscribe-stream';

/**
 * `orderstatus.v1.OrderStatusService`: the call every domain has (Subscribe); the
 * domain's snapshot call (snapshot.grpc-controller.ts) and publish calls
 * (orders/order-publish.grpc-controller.ts) are mounted by the domain's module.
 * Handlers take Nest's raw arguments (request,
 * metadata, call) with no param decorators, so the app's global ValidationPipe (which
 * the hybrid app inherits) never sees proto messages; each handler validates its own
 * fields with the shared contracts parsers and throws GatewayErrors, which
 * GrpcExceptionFilter turns into gRPC status codes.
 *
 * Every call authenticates with its `authorization: Bearer <token>` metadata
 * (UNAUTHENTICATED otherwise) and is authorized per order (PERMISSION_DENIED).
 */
@Controller()
@UseFilters(GrpcExceptionFilter)
export class OrderStatusGrpcController {
  constructor(
    @Inject(StreamConnections) private readonly connections: StreamConnections,
    @Inject(AuthService) private readonly auth: AuthService,
    @Inject(ConnectionObserver) private readonly log: ConnectionObserver,
    @Inject(StreamEventBus) private readonly bus: StreamEventBus,
  ) {}

  /**
   * Server-streaming: replay after `after_seq`, then live events; see subscribe-stream.ts
   * (which also writes the call's connection log lines). Authenticated and authorized
   * before anything is read from the bus; ends with UNAUTHENTICATED when the token
   * expires.
   */
  @GrpcMethod(GRPC_SERVICE, 'Subscribe')
  subscribe(req: SubscribeRequest, metadata: Metadata, call: SubscribeCall): Observable<never> {
    return subscribeStream(
      {
        connections: this.connections,
        domain: this.bus.domain,
        log: this.log,
        authenticate: () => this.authenticate(metadata),
        expectedDomain: expectedDomainOf(metadata),
      },
      req,
      call,
    );
  }

  private authenticate(metadata: Metadata): Promise<Principal> {
    return authenticateCall(this.auth, metadata);
  }
}

/** The `stream-domain` metadata: undefined when absent, every value when repeated (refused). */
function expectedDomainOf(metadata: Metadata): unknown {
  const values = metadata.get(EXPECTED_DOMAIN_METADATA);
  return values.length > 1 ? values : values[0];
}
