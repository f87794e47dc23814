import type { GatewayError } from './gateway-error';
import type { TraceContext } from './trace-context';

/**
 * The engine's view of a domain: what the bus, the stores, the transports and the clients
 * need to know about a stream's events, and nothing about what they mean. The order domain
 * (libs/order-domain) is one; the load test's payload event is another.
 */

/** What every event of every domain carries: the stream it belongs to and its place in it. */
export interface DomainEvent {
  /** The stream's key (an order id for the order domain). */
  readonly orderId: string;
  /** Per stream, starts at 1, increases by exactly 1. */
  readonly seq: number;
  /** Epoch microseconds at publish (see `nowUs`). */
  readonly publishedAtUs: number;
}

/** What every snapshot carries: a reset hands one to the client, which resumes after `lastSeq`. */
export interface DomainSnapshot {
  readonly orderId: string;
  /** Seq of the last event folded in (0: nothing published yet). */
  readonly lastSeq: number;
  readonly updatedAtUs: number;
  /**
   * Who may read the stream besides holders of the read-any scope (the read check on every
   * subscribe and poll); absent on streams without an owner.
   */
  readonly ownerId?: string;
}

/** One kind of event and its names on the wire. */
export interface EventKind<E extends DomainEvent = DomainEvent> {
  /**
   * The stream item it travels in: `{ kind: itemKind, [itemKind]: event }` (never `reset`
   * or `skipped`, the envelope's own items).
   */
  readonly itemKind: string;
  /** The `SubscribeResponse` oneof arm that carries it on gRPC. */
  readonly protoArm: string;
  /**
   * Its name on the JSON transports: the SSE `event:` field, the socket.io event name and
   * the `type` of a long-poll answer's element.
   */
  readonly wireName: string;
  /**
   * Whether `event` is of this kind (kinds are tried in order; the last may match all).
   * A method, so a domain's kinds stand in where the engine's base event types are
   * expected (its parameter is then checked bivariantly).
   */
  is(event: E): boolean;
}

/**
 * A domain's protobuf messages, as @grpc/proto-loader presents them: the envelope
 * (`SubscribeResponse`'s `reset` and `skipped`, the calls) is the engine's; each event
 * kind has its own arm (`EventKind.protoArm`) and the reset carries the domain's snapshot
 * in the domain's own field (`snapshotField`).
 */
export interface DomainProtoCodec<E extends DomainEvent, S extends DomainSnapshot> {
  /**
   * The `StreamReset` field its snapshot travels in (proto-loader's camelCase name, e.g.
   * `snapshot`): a message's field has one type, so each domain's snapshot has its own.
   */
  readonly snapshotField: string;
  eventToProto(event: E): object;
  snapshotToProto(snapshot: S): object;
  /** @throws TypeError for a message that is not a valid event of the kind at `arm` */
  eventFromProto(arm: string, message: unknown): E;
  /** @throws TypeError for a message that is not a valid snapshot */
  snapshotFromProto(message: unknown): S;
}

/**
 * A domain as the engine takes it: kinds, the terminal rule and the snapshot fold.
 *
 * `fold` must depend only on the newest event of each kind (a snapshot is the newest
 * state, not a sum): the bus and the in-process store apply events without folding them
 * and fold only the newest of each kind when a snapshot is read (`StreamState`).
 */
export interface StreamDomain<
  E extends DomainEvent = DomainEvent,
  S extends DomainSnapshot = DomainSnapshot,
> {
  /** For messages and metrics labels, e.g. `order`. */
  readonly name: string;
  /** Every kind, in the order `kindOf` tries them. */
  readonly kinds: readonly EventKind<E>[];
  /** Whether nothing may follow `event`: a stream that delivered it ends as completed. */
  isTerminal(event: E): boolean;
  /** Whether the stream `snapshot` describes is finished (a reset that carries it ends the stream). */
  isTerminalSnapshot(snapshot: S): boolean;
  /**
   * The snapshot after `event` from the one before it (undefined: nothing known),
   * carrying `ownerId` when given: the stream's owner, which the engine passes so that a
   * snapshot is the same whichever path built it (a store's read, a reset).
   */
  fold(previous: S | undefined, event: E, ownerId?: string): S;
  /**
   * A few words about `event` for a person (the watch CLI prints them after the seq, the
   * kind's wire name and the latency), e.g. an order's new status; absent: nothing more.
   */
  summary?(event: E): string;
  /** The same for the snapshot a reset carries. */
  snapshotSummary?(snapshot: S): string;
  /** Its messages on gRPC. */
  readonly proto: DomainProtoCodec<E, S>;
  /** How its events are appended to a store; absent for a domain the service only reads. */
  readonly append?: DomainAppend<E, S>;
}

/** The index of `event`'s kind in `domain.kinds` (the last kind when none claims it). */
export function kindIndexOf<E extends DomainEvent>(
  domain: Pick<StreamDomain<E>, 'kinds'>,
  event: E,
): number {
  const kinds = domain.kinds;
  for (let i = 0; i < kinds.length - 1; i++) if (kinds[i].is(event)) return i;
  return kinds.length - 1;
}

/** `event`'s kind (see `kindIndexOf`). */
export function kindOf<E extends DomainEvent>(
  domain: Pick<StreamDomain<E>, 'kinds'>,
  event: E,
): EventKind<E> {
  return domain.kinds[kindIndexOf(domain, event)];
}

/** The items every domain shares: what the service says about events it does not deliver. */
export const ENVELOPE_ITEM_KINDS: readonly string[] = ['reset', 'skipped'];

/** The kind whose `itemKind` is `itemKind`, undefined for the envelope's items and unknown kinds. */
export function kindOfItem<E extends DomainEvent>(
  domain: Pick<StreamDomain<E>, 'kinds'>,
  itemKind: string,
): EventKind<E> | undefined {
  return domain.kinds.find((k) => k.itemKind === itemKind);
}

/**
 * An item's name on the JSON transports (SSE `event:`, socket.io event, the raw
 * WebSocket frame's `type`): an event's kind's `wireName`, else the envelope item's kind.
 */
export function itemWireName<E extends DomainEvent>(
  domain: Pick<StreamDomain<E>, 'kinds'>,
  item: { readonly kind: string },
): string {
  return kindOfItem(domain, item.kind)?.wireName ?? item.kind;
}

/**
 * An event as its publisher hands it to a store: the store adds the seq, the time and,
 * when the rule names one, the stream's phase before it (`AppendRule.priorPhaseField`).
 * Every store writes the event's fields in one order (the bytes on the wire): `orderId`,
 * `seq`, the phase it sets (under `DomainAppend.phaseField`), the phase before it,
 * `publishedAtUs`, then the draft's other fields in the draft's order. So a client that
 * reads only the envelope fields finds them before any large payload.
 */
export type EventDraft<E extends DomainEvent = DomainEvent> = E extends unknown
  ? Readonly<Pick<E, 'orderId'> & Partial<Omit<E, 'orderId' | 'seq' | 'publishedAtUs'>>>
  : never;

/**
 * What a domain allows one append to do, as data the stores apply atomically (the Redis
 * store passes it to its Lua script as arguments, so the script knows no domain). A
 * stream has a `phase`, a string the domain chooses (an order's status); rules guard on it.
 */
export interface AppendRule {
  /** Whether the event may create the stream (it is then its event with seq 1). */
  readonly creates: boolean;
  /** The phases the stream may be in for it; undefined: any (an existing stream only). */
  readonly follows?: readonly string[];
  /**
   * The stream's phase after it, which the event carries under `DomainAppend.phaseField`
   * (the draft's value of that field is this one); undefined: unchanged. No `"` or `,`.
   */
  readonly phase?: string;
  /** The event field that carries the phase before it (omitted for a new stream). */
  readonly priorPhaseField?: string;
  /**
   * A field it sets in a store that keeps fields rather than folding events (Redis): the
   * JSON of the draft's fields `of`, under `field` (an order's newest location and ETA).
   */
  readonly keeps?: { readonly field: string; readonly of: readonly string[] };
  /** Whether nothing may follow it: the store keeps the stream for its terminal retention. */
  readonly ends: boolean;
  /** The error for a stream that does not exist (`phase` undefined) or is in another phase. */
  refusal(orderId: string, phase: string | undefined): GatewayError;
}

/** Who and how: the parts of a publish that are not the event. */
export interface AppendOptions {
  /**
   * The owner of a stream this append creates (the read check's `ownerId`); ignored for
   * an existing stream: ownership never changes.
   */
  readonly ownerId?: string;
  /**
   * Makes the append idempotent: a repeat of the key on the same stream within the store's
   * window appends nothing and answers the first append's event (`isReplay()` tells it
   * apart); a repeat with another draft (or another owner for the append that created the
   * stream) is an IdempotencyKeyReused. Callers scope the key to whoever sent it.
   */
  readonly idempotencyKey?: string;
  /**
   * The publish's trace context, carried beside the event to its deliveries (tracing on):
   * never part of the event, its history or its idempotency record.
   */
  readonly traceContext?: TraceContext;
}

/** A stream as a store that keeps fields rather than events (Redis) holds it. */
export interface StoredStream {
  readonly orderId: string;
  readonly lastSeq: number;
  readonly updatedAtUs: number;
  /** The phase rules set, undefined when none did. */
  readonly phase: string | undefined;
  /** Fields set by rules (`keeps`) and by creation (`ownerId`), as stored. */
  readonly fields: Readonly<Record<string, string>>;
}

/** How a domain's events are appended to a store. */
export interface DomainAppend<E extends DomainEvent, S extends DomainSnapshot> {
  /**
   * The field a field-keeping store (Redis) holds the stream's phase in; it must not be
   * `seq`, `updatedAtUs` or a field a rule or creation sets.
   */
  readonly phaseField: string;
  /** The rule for `draft` (e.g. which statuses a status change may follow). */
  rule(draft: EventDraft<E>): AppendRule;
  /** The snapshot a field-keeping store answers; undefined when the fields are not one. */
  snapshotOf(stored: StoredStream): S | undefined;
}

/**
 * A domain without its protobuf codec: all the JSON transports (and so a browser client)
 * need, so the codec is loaded only where gRPC is.
 */
export type DomainDescriptor<
  E extends DomainEvent = DomainEvent,
  S extends DomainSnapshot = DomainSnapshot,
> = Omit<StreamDomain<E, S>, 'proto'>;
