import {
  eventFromProto,
  skippedFromProto,
  snapshotFromProto,
  trackingFromProto,
  type ProtoSubscribeResponse,
} from '@app/contracts/proto-codec';
import { ResetReason, type StreamItem } from '@app/contracts/order-events';

/** Reset reasons by their number in proto/order_status.proto (`StreamReset.Reason`). */
const RESET_REASONS: Readonly<Record<number, ResetReason>> = {
  1: ResetReason.BeyondRetention,
  2: ResetReason.AheadOfLastSeq,
  3: ResetReason.Gap,
  4: ResetReason.Overflow,
};

/**
 * One `SubscribeResponse` (proto-loader with `oneofs: true`: the set arm is a field) as
 * a stream item; undefined for an arm this client does not know (a newer service).
 */
export function itemFromProto(m: ProtoSubscribeResponse): StreamItem | undefined {
  if ('event' in m && m.event) return { kind: 'event', event: eventFromProto(m.event) };
  if ('tracking' in m && m.tracking) {
    return { kind: 'tracking', tracking: trackingFromProto(m.tracking) };
  }
  if ('skipped' in m && m.skipped) {
    return { kind: 'skipped', skipped: skippedFromProto(m.skipped) };
  }
  if ('reset' in m && m.reset) {
    return {
      kind: 'reset',
      reset: {
        reason: RESET_REASONS[m.reset.reason] ?? ResetReason.Gap,
        snapshot: snapshotFromProto(m.reset.snapshot),
      },
    };
  }
  return undefined;
}
