import { ResetReason, SkipReason, type StreamSkipped } from './stream-envelope';
import type { DomainEvent, DomainSnapshot, StreamDomain } from './stream-domain';

/**
 * The envelope of proto/order_status.proto's `SubscribeResponse`: `reset` and `skipped`
 * are the engine's, every other arm is an event kind's (`EventKind.protoArm`), encoded
 * by the domain's codec. Messages as @grpc/proto-loader presents them (camelCase fields,
 * enums and longs as numbers).
 */
export interface ProtoEnvelopeSkipped {
  fromSeq: number;
  toSeq: number;
  reason: number;
}

/** A `SubscribeResponse`: one arm set (proto-loader with `oneofs: true`). */
export type ProtoResponse = Record<string, unknown>;

const PROTO_RESET_REASON: Readonly<Record<ResetReason, number>> = {
  [ResetReason.BeyondRetention]: 1,
  [ResetReason.AheadOfLastSeq]: 2,
  [ResetReason.Gap]: 3,
  [ResetReason.Overflow]: 4,
};

const RESET_REASON_BY_PROTO = new Map<number, ResetReason>(
  Object.entries(PROTO_RESET_REASON).map(([reason, n]) => [n, reason as ResetReason]),
);

const PROTO_SKIP_REASON: Readonly<Record<SkipReason, number>> = {
  [SkipReason.Overflow]: 1,
};

const SKIP_REASON_BY_PROTO = new Map<number, SkipReason>(
  Object.entries(PROTO_SKIP_REASON).map(([reason, n]) => [n, reason as SkipReason]),
);

export function resetReasonToProto(reason: ResetReason): number {
  return PROTO_RESET_REASON[reason];
}

/** Unknown reasons (a newer server) read as `gap`: the client replaces its view either way. */
export function resetReasonFromProto(value: number): ResetReason {
  return RESET_REASON_BY_PROTO.get(value) ?? ResetReason.Gap;
}

export function skippedToProto(s: StreamSkipped): ProtoEnvelopeSkipped {
  return { fromSeq: s.fromSeq, toSeq: s.toSeq, reason: PROTO_SKIP_REASON[s.reason] };
}

/** Unknown reasons (a newer server) read as `overflow`, the only one today. */
export function skippedFromProto(m: ProtoEnvelopeSkipped): StreamSkipped {
  return {
    fromSeq: Number(m.fromSeq),
    toSeq: Number(m.toSeq),
    reason: SKIP_REASON_BY_PROTO.get(m.reason) ?? SkipReason.Overflow,
  };
}

/** A stream item as the engine handles it: an envelope item or `{ kind, [kind]: event }`. */
type AnyItem<S> =
  | {
      readonly kind: 'reset';
      readonly reset: { readonly reason: ResetReason; readonly snapshot: S };
    }
  | { readonly kind: 'skipped'; readonly skipped: StreamSkipped }
  | { readonly kind: string };

/** The `SubscribeResponse` of `item`: the envelope's arms here, an event's by the domain. */
export function itemToProto<E extends DomainEvent, S extends DomainSnapshot>(
  domain: StreamDomain<E, S>,
  item: AnyItem<S>,
): ProtoResponse {
  if (item.kind === 'reset') {
    const { reset } = item as Extract<AnyItem<S>, { kind: 'reset' }>;
    return {
      reset: {
        reason: resetReasonToProto(reset.reason),
        [domain.proto.snapshotField]: domain.proto.snapshotToProto(reset.snapshot),
      },
    };
  }
  if (item.kind === 'skipped') {
    return {
      skipped: skippedToProto((item as Extract<AnyItem<S>, { kind: 'skipped' }>).skipped),
    };
  }
  const event = (item as unknown as Readonly<Record<string, E>>)[item.kind];
  const kind = domain.kinds.find((k) => k.itemKind === item.kind);
  if (kind === undefined) throw new TypeError(`no event kind '${item.kind}' in ${domain.name}`);
  return { [kind.protoArm]: domain.proto.eventToProto(event) };
}

/**
 * The stream item of a `SubscribeResponse`; undefined for an arm this side does not know
 * (a newer service), which a client skips.
 * @throws TypeError for a known arm whose message the domain's codec refuses
 */
export function itemFromProto<E extends DomainEvent, S extends DomainSnapshot, Item>(
  domain: StreamDomain<E, S>,
  m: ProtoResponse,
): Item | undefined {
  const reset = m.reset as ({ reason: number } & Record<string, unknown>) | null | undefined;
  if (reset) {
    const snapshot = domain.proto.snapshotFromProto(reset[domain.proto.snapshotField]);
    return {
      kind: 'reset',
      reset: { reason: resetReasonFromProto(reset.reason), snapshot },
    } as Item;
  }
  const skipped = m.skipped as ProtoEnvelopeSkipped | null | undefined;
  if (skipped) return { kind: 'skipped', skipped: skippedFromProto(skipped) } as Item;
  for (const kind of domain.kinds) {
    const message = m[kind.protoArm];
    if (message === undefined || message === null) continue;
    return {
      kind: kind.itemKind,
      [kind.itemKind]: domain.proto.eventFromProto(kind.protoArm, message),
    } as Item;
  }
  return undefined;
}
