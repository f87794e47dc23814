import { ErrorCode, GatewayError } from '@app/contracts/gateway-error';
import type {
  AppendOptions,
  AppendRule,
  DomainEvent,
  EventDraft,
  StreamDomain,
} from '@app/contracts/stream-domain';
import type { PayloadEvent, PayloadSnapshot } from './payload-events';
import { PAYLOAD_PROTO_ARM, PAYLOAD_PROTO_CODEC } from './payload-proto-codec';

/**
 * Any payload may follow any other, and the first creates the stream: no phase, nothing
 * ends it (the Redis store's script gets exactly that as its arguments).
 */
const PAYLOAD_RULE: AppendRule = {
  creates: true,
  ends: false,
  // Unreachable (the rule creates and follows any phase), but a rule must say it.
  refusal: (orderId) =>
    new GatewayError(ErrorCode.FailedPrecondition, `payload stream ${orderId} refused the event`),
};

export const PAYLOAD_DOMAIN: StreamDomain<PayloadEvent, PayloadSnapshot> = {
  name: 'payload',
  kinds: [{ itemKind: 'event', wireName: 'payload', protoArm: PAYLOAD_PROTO_ARM, is: () => true }],
  // A payload stream never finishes: the load test ends it by closing the connection.
  isTerminal: () => false,
  isTerminalSnapshot: () => false,
  // The owner is the stream's (a snapshot carries it whichever path built it, as an order's does).
  fold: (_previous, event, ownerId) =>
    ownerId === undefined
      ? { orderId: event.orderId, lastSeq: event.seq, updatedAtUs: event.publishedAtUs }
      : { orderId: event.orderId, lastSeq: event.seq, updatedAtUs: event.publishedAtUs, ownerId },
  summary: (event) => `${event.payload.length} bytes`,
  proto: PAYLOAD_PROTO_CODEC,
  append: {
    // No rule sets a phase; the field is only where a store would keep one.
    phaseField: 'phase',
    rule: () => PAYLOAD_RULE,
    snapshotOf: ({ orderId, lastSeq, updatedAtUs, fields: { ownerId } }) =>
      ownerId === undefined
        ? { orderId, lastSeq, updatedAtUs }
        : { orderId, lastSeq, updatedAtUs, ownerId },
  },
};

/** Largest payload a publish may ask for (payload-size experiments, not bulk data). */
export const MAX_PAYLOAD_BYTES = 64 * 1024;

/** A payload to publish: `bytes` of filler on stream `orderId`. */
export interface PayloadCommand extends AppendOptions {
  readonly orderId: string;
  readonly bytes: number;
}

/** What `publishPayload` needs of a store (`StreamStore.append`, and `appendSync` if it has one). */
export interface PayloadAppender {
  append(draft: EventDraft, rule: AppendRule, options?: AppendOptions): Promise<DomainEvent>;
  appendSync?(draft: EventDraft, rule: AppendRule, options?: AppendOptions): DomainEvent;
}

let lastPayload = '';

/**
 * Filler shared while its size stays the same (a run uses one size): retained events
 * would otherwise each keep a copy. Strings are immutable, so sharing is invisible.
 */
function payloadOf(bytes: number): string {
  if (lastPayload.length !== bytes) lastPayload = 'x'.repeat(bytes);
  return lastPayload;
}

/**
 * Publishes a payload event on its stream (created by its first event).
 * @throws GatewayError InvalidArgument for a size outside 0..MAX_PAYLOAD_BYTES;
 *   IdempotencyKeyReused for a key repeated with another size; Unavailable when the store
 *   is down.
 */
export async function publishPayload(
  store: PayloadAppender,
  cmd: PayloadCommand,
): Promise<PayloadEvent> {
  const [draft, options] = payloadAppend(cmd);
  return (await store.append(draft, PAYLOAD_RULE, options)) as PayloadEvent;
}

/**
 * `publishPayload` on a store that appends synchronously (the in-process one): the
 * simulator's steady schedule publishes thousands of events a second, with no promise
 * per event, as the order domain's simulator does.
 * @throws TypeError for a store without `appendSync`; otherwise as `publishPayload`.
 */
export function publishPayloadSync(store: PayloadAppender, cmd: PayloadCommand): PayloadEvent {
  if (store.appendSync === undefined) {
    throw new TypeError('this store cannot append synchronously (an in-process store can)');
  }
  const [draft, options] = payloadAppend(cmd);
  return store.appendSync(draft, PAYLOAD_RULE, options) as PayloadEvent;
}

function payloadAppend(cmd: PayloadCommand): [EventDraft<PayloadEvent>, AppendOptions] {
  const { orderId, bytes, ownerId, idempotencyKey, traceContext } = cmd;
  if (!Number.isSafeInteger(bytes) || bytes < 0 || bytes > MAX_PAYLOAD_BYTES) {
    throw new GatewayError(
      ErrorCode.InvalidArgument,
      `bytes must be an integer from 0 to ${MAX_PAYLOAD_BYTES}`,
    );
  }
  return [
    { orderId, payload: payloadOf(bytes) },
    { ownerId, idempotencyKey, traceContext },
  ];
}
