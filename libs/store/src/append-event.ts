import type { AppendRule, DomainEvent, EventDraft } from '@app/contracts';

/**
 * The event `draft` makes, its fields in the order every store writes (see EventDraft;
 * the Redis store writes the same as JSON text).
 */
export function eventOf<E extends DomainEvent>(
  draft: EventDraft<E>,
  seq: number,
  rule: AppendRule,
  phaseField: string,
  prior: string | undefined,
  publishedAtUs: number,
): E {
  const event: Record<string, unknown> = { orderId: draft.orderId, seq };
  if (rule.phase !== undefined) event[phaseField] = rule.phase;
  if (prior !== undefined && rule.priorPhaseField !== undefined) {
    event[rule.priorPhaseField] = prior;
  }
  event.publishedAtUs = publishedAtUs;
  // for-in, not Object.entries: no array per field on the in-process publish path.
  const fields = draft as Record<string, unknown>;
  for (const key in fields) {
    const value = fields[key];
    if (key !== 'orderId' && key !== phaseField && value !== undefined) event[key] = value;
  }
  return event as unknown as E;
}

/** The draft's fields the store does not write itself, in the draft's order. */
export function draftFields<E extends DomainEvent>(
  draft: EventDraft<E>,
  phaseField: string,
): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(draft)) {
    if (key !== 'orderId' && key !== phaseField && value !== undefined) fields[key] = value;
  }
  return fields;
}
