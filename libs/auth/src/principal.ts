import type { Scope } from './scopes';

/** Who is calling, as established from a verified token (or a ticket issued for one). */
export interface Principal {
  /** The token's `sub`: the customer id orders are owned by. */
  readonly subject: string;
  readonly scopes: ReadonlySet<Scope>;
  /**
   * Epoch ms after which the credentials no longer verify (`exp` plus the clock
   * tolerance): streams opened with them end with `token_expired` then.
   */
  readonly expiresAtMs: number;
}
