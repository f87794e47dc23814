import type { MemoryUse } from '@app/contracts';

/** What a connection's closing report needs; `closed()` is idempotent. */
export interface ConnectionHandle {
  /**
   * `principal`: when the caller was only authenticated after the connection opened (a
   * gRPC handler checks its metadata itself), who it turned out to be.
   */
  closed(reason?: string, principal?: string): void;
}

/** The memory a transport holds for its connections, read when metrics are scraped. */
export type ConnectionMemorySource = () => readonly MemoryUse[];

/**
 * What the connection layer reports to ops: a connection opened and closed, and the
 * memory a transport holds for its connections. An abstract class as DI token, provided
 * by ops, so transports report through the connection layer and never import ops.
 */
export abstract class ConnectionObserver {
  /** Whether opened/closed are recorded; checked before anything is built for them. */
  abstract get enabled(): boolean;

  abstract opened(
    transport: string,
    principal: string,
    attrs?: Record<string, unknown>,
  ): ConnectionHandle;

  abstract trackMemory(source: ConnectionMemorySource): void;
}

/** Who `principalOf` names when the auth layer left no principal. */
export const ANONYMOUS = 'anonymous';

/**
 * The principal a request, socket or call was authenticated as, where the auth layer
 * leaves it: `principal.subject` on the Fastify request, on `socket.data`, or on the
 * gRPC call. `anonymous` when there is none (auth disabled, or not reached yet).
 */
export function principalOf(holder: unknown): string {
  const p = (holder as { principal?: { subject?: unknown } } | null | undefined)?.principal;
  return typeof p?.subject === 'string' ? p.subject : ANONYMOUS;
}
