import type { DomainProtoCodec } from '@app/contracts/stream-domain';
import {
  isTrackingUpdate,
  type GeoPoint,
  type OrderEvent,
  type OrderSnapshot,
  type OrderStatusChanged,
  type StreamItem,
  type Tracking,
  type TrackingUpdated,
} from './order-events';
import {
  resetReasonToProto,
  skippedToProto,
  type ProtoEnvelopeSkipped,
} from '@app/contracts/stream-proto';
import { OrderStatus } from './order-status';

/**
 * Mapping between the domain types and the messages of proto/order_domain.proto as
 * @grpc/proto-loader presents them (camelCase fields, enums as numbers, longs as numbers).
 */
export const PROTO_STATUS: Readonly<Record<OrderStatus, number>> = {
  [OrderStatus.Created]: 1,
  [OrderStatus.Paid]: 2,
  [OrderStatus.Packed]: 3,
  [OrderStatus.Shipped]: 4,
  [OrderStatus.OutForDelivery]: 5,
  [OrderStatus.Delivered]: 6,
  [OrderStatus.Cancelled]: 7,
};

const STATUS_BY_PROTO = new Map<number, OrderStatus>(
  Object.entries(PROTO_STATUS).map(([status, n]) => [n, status as OrderStatus]),
);

/** Undefined for UNSPECIFIED or unknown numbers: the caller reports InvalidArgument. */
export function statusFromProto(value: unknown): OrderStatus | undefined {
  return typeof value === 'number' ? STATUS_BY_PROTO.get(value) : undefined;
}

export interface ProtoOrderStatusChanged {
  orderId: string;
  seq: number;
  status: number;
  publishedAtUs: number;
  /** 0 (UNSPECIFIED, or absent when encoding) on the first event only. */
  previousStatus?: number;
  /** '' or absent: no reason. */
  reason?: string;
}

export interface ProtoGeoPoint {
  lat: number;
  lon: number;
}

export interface ProtoTrackingUpdated {
  orderId: string;
  seq: number;
  status: number;
  publishedAtUs: number;
  location: ProtoGeoPoint | null;
  etaMs: number;
}

export interface ProtoTracking {
  location: ProtoGeoPoint | null;
  etaMs: number;
}

export interface ProtoOrderSnapshot {
  orderId: string;
  status: number;
  lastSeq: number;
  updatedAtUs: number;
  tracking?: ProtoTracking | null;
  ownerId?: string;
}

export type ProtoSkipped = ProtoEnvelopeSkipped;

export type ProtoSubscribeResponse =
  | { event: ProtoOrderStatusChanged }
  | { reset: { reason: number; snapshot: ProtoOrderSnapshot } }
  | { skipped: ProtoSkipped }
  | { tracking: ProtoTrackingUpdated };

export function eventToProto(e: OrderStatusChanged): ProtoOrderStatusChanged {
  const msg: ProtoOrderStatusChanged = {
    orderId: e.orderId,
    seq: e.seq,
    status: PROTO_STATUS[e.status],
    publishedAtUs: e.publishedAtUs,
  };
  if (e.previousStatus !== undefined) msg.previousStatus = PROTO_STATUS[e.previousStatus];
  if (e.reason !== undefined) msg.reason = e.reason;
  return msg;
}

export function trackingToProto(t: TrackingUpdated): ProtoTrackingUpdated {
  return {
    orderId: t.orderId,
    seq: t.seq,
    status: PROTO_STATUS[t.status],
    publishedAtUs: t.publishedAtUs,
    location: { lat: t.location.lat, lon: t.location.lon },
    etaMs: t.etaMs,
  };
}

export function snapshotToProto(s: OrderSnapshot): ProtoOrderSnapshot {
  const msg: ProtoOrderSnapshot = {
    orderId: s.orderId,
    status: PROTO_STATUS[s.status],
    lastSeq: s.lastSeq,
    updatedAtUs: s.updatedAtUs,
  };
  if (s.tracking !== undefined) {
    msg.tracking = { location: { ...s.tracking.location }, etaMs: s.tracking.etaMs };
  }
  if (s.ownerId !== undefined) msg.ownerId = s.ownerId;
  return msg;
}

export function streamItemToProto(item: StreamItem): ProtoSubscribeResponse {
  switch (item.kind) {
    case 'event':
      return { event: eventToProto(item.event) };
    case 'tracking':
      return { tracking: trackingToProto(item.tracking) };
    case 'reset':
      return {
        reset: {
          reason: resetReasonToProto(item.reset.reason),
          snapshot: snapshotToProto(item.reset.snapshot),
        },
      };
    case 'skipped':
      return { skipped: skippedToProto(item.skipped) };
  }
}

export function eventFromProto(m: ProtoOrderStatusChanged): OrderStatusChanged {
  const status = statusFromProto(m.status);
  if (status === undefined) throw new TypeError(`unknown proto status ${String(m.status)}`);
  const previousStatus = statusFromProto(m.previousStatus);
  return {
    orderId: m.orderId,
    seq: Number(m.seq),
    status,
    ...(previousStatus !== undefined ? { previousStatus } : {}),
    publishedAtUs: Number(m.publishedAtUs),
    ...(m.reason ? { reason: m.reason } : {}),
  };
}

export function trackingFromProto(m: ProtoTrackingUpdated): TrackingUpdated {
  const status = statusFromProto(m.status);
  if (status === undefined) throw new TypeError(`unknown proto status ${String(m.status)}`);
  return {
    orderId: m.orderId,
    seq: Number(m.seq),
    status,
    publishedAtUs: Number(m.publishedAtUs),
    location: geoPointFromProto(m.location),
    etaMs: Number(m.etaMs),
  };
}

export function snapshotFromProto(m: ProtoOrderSnapshot): OrderSnapshot {
  const status = statusFromProto(m.status);
  if (status === undefined) throw new TypeError(`unknown proto status ${String(m.status)}`);
  const tracking: Tracking | undefined = m.tracking
    ? { location: geoPointFromProto(m.tracking.location), etaMs: Number(m.tracking.etaMs) }
    : undefined;
  return {
    orderId: m.orderId,
    status,
    lastSeq: Number(m.lastSeq),
    updatedAtUs: Number(m.updatedAtUs),
    ...(tracking !== undefined ? { tracking } : {}),
    // proto3 strings default to '': empty means no owner kept.
    ...(m.ownerId ? { ownerId: m.ownerId } : {}),
  };
}

/** A missing location reads as 0,0 (proto3 default), as proto-loader presents it. */
function geoPointFromProto(m: ProtoGeoPoint | null | undefined): GeoPoint {
  return { lat: Number(m?.lat ?? 0), lon: Number(m?.lon ?? 0) };
}

/** The order domain's codec (`StreamDomain.proto`): the arm says which message it is. */
export const ORDER_PROTO_CODEC: DomainProtoCodec<OrderEvent, OrderSnapshot> = {
  snapshotField: 'snapshot',
  eventToProto: (event) => (isTrackingUpdate(event) ? trackingToProto(event) : eventToProto(event)),
  snapshotToProto,
  eventFromProto: (arm, message) =>
    arm === 'tracking'
      ? trackingFromProto(message as ProtoTrackingUpdated)
      : eventFromProto(message as ProtoOrderStatusChanged),
  snapshotFromProto: (message) => snapshotFromProto(message as ProtoOrderSnapshot),
};
