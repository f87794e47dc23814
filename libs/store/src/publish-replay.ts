import { IdempotencyKeyReused, type DomainEvent, type EventDraft } from '@app/contracts';

/**
 * @default 300_000 ms a publish's idempotency key is remembered: longer than any sensible
 * client retry loop (the README advises seconds), short enough that the store keeps few.
 */
export const DEFAULT_IDEMPOTENCY_WINDOW_MS = 300_000;

/** Events a store answered from its idempotency record instead of publishing anew. */
const replays = new WeakSet<DomainEvent>();

/**
 * Whether `original`, the event a key's first append made, is what `draft` asks for: the
 * same fields with the same values (the store's own, seq, time and prior phase, aside),
 * each compared as JSON.
 */
function sameDraft(original: DomainEvent, draft: object, priorPhaseField?: string): boolean {
  const made = original as unknown as Record<string, unknown>;
  const asked = draft as Record<string, unknown>;
  const own = (key: string) => key === 'seq' || key === 'publishedAtUs' || key === priorPhaseField;
  const madeKeys = Object.keys(made).filter((key) => !own(key) && made[key] !== undefined);
  const askedKeys = Object.keys(asked).filter((key) => asked[key] !== undefined);
  return (
    madeKeys.length === askedKeys.length &&
    askedKeys.every((key) => JSON.stringify(made[key]) === JSON.stringify(asked[key]))
  );
}

/**
 * Answers a repeated idempotency key with the event its first append made (a fresh object,
 * marked as a replay, so the first caller's object stays unmarked). The key covers the
 * whole request: the draft and, when the first append created the stream (seq 1), its
 * owner (`ownerOfStream`, the store's).
 * @throws IdempotencyKeyReused when either differs.
 */
export function replayOf<E extends DomainEvent>(
  original: E,
  draft: EventDraft,
  priorPhaseField: string | undefined,
  ownerId: string | undefined,
  ownerOfStream: string | undefined,
): E {
  if (
    !sameDraft(original, draft, priorPhaseField) ||
    (original.seq === 1 && ownerId !== undefined && ownerId !== ownerOfStream)
  ) {
    throw new IdempotencyKeyReused(
      `this idempotency key was already used on ${original.orderId} (for its event ${original.seq}) ` +
        'with another request; a repeat must send the same body (use a new key for a new change)',
    );
  }
  const replay = { ...original };
  replays.add(replay);
  return replay;
}

/**
 * Whether a publish answered with an earlier publish's event because its idempotency key
 * was repeated (HTTP says so with `Idempotent-Replayed: true`, gRPC with `replayed`).
 */
export function isReplay(event: DomainEvent): boolean {
  return replays.has(event);
}
