import type { DomainProtoCodec } from '@app/contracts/stream-domain';
import type { PayloadEvent, PayloadSnapshot } from './payload-events';

/**
 * The messages of proto/payload_domain.proto as @grpc/proto-loader presents them
 * (camelCase fields, longs as numbers, bytes as Buffers).
 */
export interface ProtoPayloadEvent {
  orderId: string;
  seq: number;
  publishedAtUs: number;
  payload: Buffer;
}

export interface ProtoPayloadSnapshot {
  orderId: string;
  lastSeq: number;
  updatedAtUs: number;
  /** '' (proto3 default) or absent: no owner kept. */
  ownerId?: string;
}

/** The `SubscribeResponse` arm of a payload and the `StreamReset` field of its snapshot. */
export const PAYLOAD_PROTO_ARM = 'payload';
export const PAYLOAD_SNAPSHOT_FIELD = 'payloadSnapshot';

/**
 * The payload's filler is one byte per character on every transport (JSON carries the
 * string, gRPC `bytes`): latin1 maps the two one to one.
 */
const FILLER_ENCODING = 'latin1';

export function payloadEventToProto(e: PayloadEvent): ProtoPayloadEvent {
  return {
    orderId: e.orderId,
    seq: e.seq,
    publishedAtUs: e.publishedAtUs,
    payload: Buffer.from(e.payload, FILLER_ENCODING),
  };
}

/** @throws TypeError for a message that is not a payload event */
export function payloadEventFromProto(message: unknown): PayloadEvent {
  const m = message as Partial<ProtoPayloadEvent> | null | undefined;
  if (typeof m?.orderId !== 'string' || !Buffer.isBuffer(m.payload)) {
    throw new TypeError('not a payload event');
  }
  return {
    orderId: m.orderId,
    seq: Number(m.seq),
    publishedAtUs: Number(m.publishedAtUs),
    payload: m.payload.toString(FILLER_ENCODING),
  };
}

export function payloadSnapshotToProto(s: PayloadSnapshot): ProtoPayloadSnapshot {
  const msg: ProtoPayloadSnapshot = {
    orderId: s.orderId,
    lastSeq: s.lastSeq,
    updatedAtUs: s.updatedAtUs,
  };
  if (s.ownerId !== undefined) msg.ownerId = s.ownerId;
  return msg;
}

/** @throws TypeError for a message that is not a payload snapshot (absent, or an order's) */
export function payloadSnapshotFromProto(message: unknown): PayloadSnapshot {
  const m = message as Partial<ProtoPayloadSnapshot> | null | undefined;
  if (typeof m?.orderId !== 'string') throw new TypeError('not a payload snapshot');
  return {
    orderId: m.orderId,
    lastSeq: Number(m.lastSeq ?? 0),
    updatedAtUs: Number(m.updatedAtUs ?? 0),
    // proto3 strings default to '': empty means no owner kept.
    ...(m.ownerId ? { ownerId: m.ownerId } : {}),
  };
}

/** The payload domain's codec (`StreamDomain.proto`): one arm, one snapshot field. */
export const PAYLOAD_PROTO_CODEC: DomainProtoCodec<PayloadEvent, PayloadSnapshot> = {
  snapshotField: PAYLOAD_SNAPSHOT_FIELD,
  eventToProto: payloadEventToProto,
  snapshotToProto: payloadSnapshotToProto,
  eventFromProto: (_arm, message) => payloadEventFromProto(message),
  snapshotFromProto: payloadSnapshotFromProto,
};
