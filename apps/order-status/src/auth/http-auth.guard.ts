import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { authorizationValues, StreamTicketStore, type Principal, type Scope } from '@app/auth';
import { ErrorCode, GatewayError } from '@app/contracts';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { HTTP_CONNECTION_ROUTES } from '../connections/connection-routes';
import { AUTH_POLICY, REQUIRED_SCOPES, type AuthPolicy } from './auth.decorators';
import { AuthService } from './auth.service';

/** The API namespace: authenticated unless a route says otherwise. */
export const API_PREFIX = '/v1/';

/** A handler's auth metadata (its own, else its controller's). */
interface DeclaredAuth {
  readonly policy: AuthPolicy | undefined;
  readonly scopes: readonly Scope[];
}

/**
 * Global guard for HTTP routes. Deny by default under `/v1/` (the API): a route there
 * takes a bearer token unless marked `@Public()`, and SSE (`@StreamCredentials()`) also
 * a stream ticket or the session cookie. Outside `/v1/` (health, metrics, the demo page)
 * routes are public unless they ask for a policy, so operational endpoints stay usable by
 * probes and scrapers without a token. The caller's
 * principal is put on the request; per-order checks happen in the handlers (they need the
 * order id and its owner). Nest guards also run for gRPC and socket.io handlers; those
 * authenticate with metadata and in the handshake instead, so they are let through here.
 *
 * Credentials are tried in a fixed order and the first one present decides: a bad
 * Authorization header is a 401 even when a valid cookie is also sent.
 */
@Injectable()
export class HttpAuthGuard implements CanActivate {
  /** By controller, then handler: a handler inherited by two controllers reads each's. */
  private readonly declared = new WeakMap<object, WeakMap<object, DeclaredAuth>>();

  constructor(
    @Inject(Reflector) private readonly reflector: Reflector,
    @Inject(AuthService) private readonly auth: AuthService,
    @Inject(StreamTicketStore) private readonly tickets: StreamTicketStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * A boolean, not a promise, when the credentials were verified recently (the common
   * case: a polling client presents the same token on every request); Nest then skips
   * the await it gives a guard's promise.
   */
  canActivate(ctx: ExecutionContext): boolean | Promise<boolean> {
    if (ctx.getType() !== 'http') return true;
    const declared = this.declaredFor(ctx);
    // The argument itself: switchToHttp() builds an object and three closures per call.
    const req = ctx.getArgByIndex<FastifyRequest>(0);
    const route = req.routeOptions.url ?? req.url;
    const policy = declared.policy ?? (route.startsWith(API_PREFIX) ? 'bearer' : 'public');
    if (policy === 'public') return true;
    // The transport label metrics count failures under (the bus's, for streaming routes).
    const transport = HTTP_CONNECTION_ROUTES[route] ?? 'http';
    const principal = this.authenticate(req, policy === 'stream', transport);
    return principal instanceof Promise
      ? principal.then((p) => this.admit(req, p, declared.scopes, transport))
      : this.admit(req, principal, declared.scopes, transport);
  }

  /** The principal has every scope the route asks for: it goes on the request. */
  private admit(
    req: FastifyRequest,
    principal: Principal,
    scopes: readonly Scope[],
    transport: string,
  ): boolean {
    for (const scope of scopes) {
      if (!principal.scopes.has(scope)) {
        const err = new GatewayError(ErrorCode.PermissionDenied, `token lacks scope ${scope}`);
        this.auth.recordFailure(transport, err);
        throw err;
      }
    }
    req.principal = principal;
    return true;
  }

  /**
   * What a handler's decorators ask for, read once per handler: metadata is fixed when the
   * module loads, and every poll is a request.
   */
  private declaredFor(ctx: ExecutionContext): DeclaredAuth {
    const handler = ctx.getHandler();
    const controller = ctx.getClass();
    let byHandler = this.declared.get(controller);
    if (byHandler === undefined) {
      byHandler = new WeakMap();
      this.declared.set(controller, byHandler);
    }
    let declared = byHandler.get(handler);
    if (declared === undefined) {
      const targets = [handler, controller];
      declared = {
        policy: this.reflector.getAllAndOverride<AuthPolicy>(AUTH_POLICY, targets),
        scopes: this.reflector.getAllAndOverride<Scope[]>(REQUIRED_SCOPES, targets) ?? [],
      };
      byHandler.set(handler, declared);
    }
    return declared;
  }

  private authenticate(
    req: FastifyRequest,
    stream: boolean,
    transport: string,
  ): Principal | Promise<Principal> {
    // The parsed header only says whether there is one: it keeps the first of several.
    if (req.headers.authorization !== undefined) {
      return this.auth.authenticateHeaderNow(authorizationValues(req.raw.rawHeaders), transport);
    }
    if (!stream) return this.auth.authenticate(undefined, transport);
    const ticket = (req.query as Record<string, unknown> | undefined)?.ticket;
    if (ticket !== undefined) return this.redeemCounted(req, ticket, transport);
    return this.auth.authenticateNow(this.sessionCookie(req), transport);
  }

  /**
   * The session cookie, parsed here rather than by @fastify/cookie's hook on every
   * request (see http-security.ts): only a stream request without a token or ticket reads
   * it, and every other request (every poll) skips a parse, a cookie object and a Map.
   */
  private sessionCookie(req: FastifyRequest): string | undefined {
    const header = req.headers.cookie;
    return header === undefined
      ? undefined
      : req.server.parseCookie(header)[this.config.auth.cookieName];
  }

  private async redeemCounted(
    req: FastifyRequest,
    ticket: unknown,
    transport: string,
  ): Promise<Principal> {
    try {
      return await this.redeem(req, ticket);
    } catch (err) {
      this.auth.recordFailure(transport, err);
      throw err;
    }
  }

  /**
   * A single-use stream ticket, for this request's order only (redeemed in the shared
   * store when there is one, so on any instance).
   */
  private redeem(req: FastifyRequest, ticket: unknown): Promise<Principal> {
    const orderId = (req.params as Record<string, unknown> | undefined)?.orderId;
    if (typeof ticket !== 'string' || typeof orderId !== 'string') {
      throw new GatewayError(ErrorCode.Unauthenticated, 'malformed stream ticket');
    }
    return this.tickets.redeem(ticket, orderId);
  }
}
