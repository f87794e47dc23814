import {
  DEFAULT_TICKETS_MAX_BYTES,
  DEFAULT_RATE_WINDOWS_MAX_BYTES,
  DEFAULT_VERIFIED_TOKENS_MAX_BYTES,
} from '@app/auth';
import { DEFAULT_IDEMPOTENCY_MAX_BYTES } from '@app/store';
import type { EnvReader } from './env-schema';

/**
 * The byte bound of each in-process structure a client can grow (docs/operations.md,
 * sizing). Each is an estimate of what its entries hold on the heap; what is held, and
 * what was evicted or refused at the bound, is in `order_memory_*{structure}`.
 */
export interface MemoryConfig {
  /** Embedded store: idempotency keys and their events (least recently used evicted). */
  readonly idempotencyKeysMaxBytes: number;
  /** Without Redis: unredeemed stream tickets (new ones refused at the bound). */
  readonly streamTicketsMaxBytes: number;
  /** Recently verified tokens (least recently used evicted). */
  readonly verifiedTokensMaxBytes: number;
  /** Without Redis: publish-rate windows (new principals refused at the bound). */
  readonly rateWindowsMaxBytes: number;
  /** socket.io subscriptions of every socket together (new ones refused at the bound). */
  readonly wsSubscriptionsMaxBytes: number;
}

/**
 * @default 16_777_216 bytes (16 MiB) of socket.io subscriptions in one process: about
 * 19,000 (`WS_MAX_SUBSCRIPTIONS_PER_SOCKET` and the connection limit bound one
 * principal's share, this bounds everyone's together).
 */
export const DEFAULT_WS_SUBSCRIPTIONS_MAX_BYTES = 16 * 1024 * 1024;

const MIN_BYTES = 1_024;
const MAX_BYTES = 2 ** 40;

export function readMemoryConfig(r: EnvReader): MemoryConfig {
  const bytes = (name: string, def: number, doc: string) =>
    r.int(name, def, MIN_BYTES, MAX_BYTES, doc);
  return {
    idempotencyKeysMaxBytes: bytes(
      'MEMORY_IDEMPOTENCY_KEYS_MAX_BYTES',
      DEFAULT_IDEMPOTENCY_MAX_BYTES,
      'embedded store: estimated bytes of idempotency keys and their events kept; past it the least recently used key is forgotten before its window ends (`structure="idempotency_keys"`)',
    ),
    streamTicketsMaxBytes: bytes(
      'MEMORY_STREAM_TICKETS_MAX_BYTES',
      DEFAULT_TICKETS_MAX_BYTES,
      'without Redis: estimated bytes of unredeemed stream tickets; past it a new ticket is refused with 429 and retry advice, an issued one is never dropped (`structure="stream_tickets"`)',
    ),
    verifiedTokensMaxBytes: bytes(
      'MEMORY_VERIFIED_TOKENS_MAX_BYTES',
      DEFAULT_VERIFIED_TOKENS_MAX_BYTES,
      'estimated bytes of recently verified tokens remembered; past it the least recently used is forgotten (verified again when next seen) (`structure="verified_tokens"`)',
    ),
    rateWindowsMaxBytes: bytes(
      'MEMORY_RATE_WINDOWS_MAX_BYTES',
      DEFAULT_RATE_WINDOWS_MAX_BYTES,
      'without Redis: estimated bytes of publish-rate windows; past it a principal without a live window is refused with 429 and retry advice (`structure="rate_windows"`)',
    ),
    wsSubscriptionsMaxBytes: bytes(
      'MEMORY_WS_SUBSCRIPTIONS_MAX_BYTES',
      DEFAULT_WS_SUBSCRIPTIONS_MAX_BYTES,
      'estimated bytes of the socket.io subscriptions of every socket together; past it a `subscribe` is answered `resource_exhausted` with retry advice, an open one is never dropped (`structure="ws_subscriptions"`)',
    ),
  };
}
