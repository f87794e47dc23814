import { isScope } from './scopes';
import type { TicketEntry } from './stream-tickets';

/**
 * A ticket as stored outside the process (Redis): the principal it stands for, its order
 * and its expiry, as JSON. What comes back is checked field by field: the store is
 * shared, and a value that does not parse is treated as no ticket at all.
 */
export function encodeTicketEntry(entry: TicketEntry): string {
  const { principal, orderId, expiresAtMs } = entry;
  return JSON.stringify({
    sub: principal.subject,
    scopes: [...principal.scopes],
    tokenExpiresAtMs: principal.expiresAtMs,
    orderId,
    expiresAtMs,
  });
}

export function decodeTicketEntry(json: string): TicketEntry | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (typeof raw !== 'object' || raw === null) return undefined;
  const v = raw as Record<string, unknown>;
  if (
    typeof v.sub !== 'string' ||
    !Array.isArray(v.scopes) ||
    typeof v.tokenExpiresAtMs !== 'number' ||
    typeof v.orderId !== 'string' ||
    typeof v.expiresAtMs !== 'number'
  ) {
    return undefined;
  }
  return {
    principal: {
      subject: v.sub,
      scopes: new Set((v.scopes as unknown[]).filter(isScope)),
      expiresAtMs: v.tokenExpiresAtMs,
    },
    orderId: v.orderId,
    expiresAtMs: v.expiresAtMs,
  };
}
