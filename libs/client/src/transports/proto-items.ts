import type { DomainEvent, DomainSnapshot, StreamDomain } from '@app/contracts/stream-domain';
import type { StreamItemOf } from '@app/contracts/stream-item';
import {
  itemFromProto as envelopeItemFromProto,
  type ProtoResponse,
} from '@app/contracts/stream-proto';

/**
 * One `SubscribeResponse` (proto-loader with `oneofs: true`: the set arm is a field) as
 * a stream item; undefined for an arm this client does not know (a newer service).
 */
export function itemFromProto(domain: StreamDomain, m: ProtoResponse): StreamItemOf | undefined {
  return envelopeItemFromProto<DomainEvent, DomainSnapshot, StreamItemOf>(domain, m);
}
