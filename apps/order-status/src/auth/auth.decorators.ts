import { createParamDecorator, SetMetadata, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Principal, Scope } from '@app/auth';

/** How a route authenticates; see HttpAuthGuard. */
export type AuthPolicy = 'public' | 'bearer' | 'stream';

export const AUTH_POLICY = Symbol('AUTH_POLICY');
export const REQUIRED_SCOPES = Symbol('REQUIRED_SCOPES');

/** No credentials needed (health, metrics). Every other route needs a bearer token. */
export const Public = () => SetMetadata(AUTH_POLICY, 'public' satisfies AuthPolicy);

/**
 * For EventSource, which cannot send headers: besides `Authorization: Bearer`, the route
 * accepts a single-use `?ticket=` (for this order) or the HttpOnly session cookie. Only
 * for GET streams: a cookie on a state-changing route would invite CSRF.
 */
export const StreamCredentials = () => SetMetadata(AUTH_POLICY, 'stream' satisfies AuthPolicy);

/** The route needs these scopes besides a valid token (403 otherwise). */
export const RequireScopes = (...scopes: Scope[]) => SetMetadata(REQUIRED_SCOPES, scopes);

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by HttpAuthGuard on every non-public route. */
    principal?: Principal;
  }
}

/** The authenticated caller of this request (HttpAuthGuard has set it). */
export const CurrentPrincipal = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): Principal => {
    const principal = ctx.switchToHttp().getRequest<FastifyRequest>().principal;
    // A route without the guard's principal is a wiring bug, not a client error.
    if (principal === undefined) throw new Error('no principal: is the route public?');
    return principal;
  },
);
