import type { DomainEvent, DomainSnapshot } from '@app/contracts/stream-domain';

/**
 * The load test's own event: a payload of N bytes on a stream, no life cycle. It is the
 * second domain that proves the engine carries any domain, and where
 * payload-size experiments belong rather than in the order contract.
 */
export interface PayloadEvent extends DomainEvent {
  /** Filler of the size under test. */
  readonly payload: string;
}

/** A payload stream's state: only its position (no event changes anything else). */
export type PayloadSnapshot = DomainSnapshot;
