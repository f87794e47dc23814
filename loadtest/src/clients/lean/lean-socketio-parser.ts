import { Decoder, Encoder, PacketType, protocol } from 'socket.io-parser';
import { EVENT_NAMES } from '../wire-types';
import { leanEvent } from './lean-event';

/**
 * Event packets of the service's `/orders` namespace that carry one event (the names
 * the subscriber counts, of either domain). Everything else (connect, acks, reset, skipped, end, errors)
 * is rare and goes through socket.io-parser's own decoding.
 */
const LEAN_EVENTS = EVENT_NAMES;
const NAMESPACE = '/orders';
const PREFIXES = LEAN_EVENTS.map((name) => ({
  name,
  prefix: `${PacketType.EVENT}${NAMESPACE},["${name}",`,
}));

/**
 * socket.io-parser's Decoder with one shortcut: an event packet carrying one order event
 * is decoded to `[name, { orderId, seq, publishedAtUs }]` by the lean reader instead of
 * a JSON.parse of the whole packet. socket.io-client takes a parser as an option and
 * calls nothing else of it, so the rest of the protocol stays the library's.
 */
export class LeanDecoder extends Decoder {
  override add(obj: unknown): void {
    if (typeof obj === 'string' && obj.charCodeAt(obj.length - 1) === 93 /* ] */) {
      for (const { name, prefix } of PREFIXES) {
        if (!obj.startsWith(prefix)) continue;
        const event = leanEvent(obj, prefix.length, obj.length - 1);
        this.emitReserved('decoded', {
          type: PacketType.EVENT,
          nsp: NAMESPACE,
          data: [name, event],
        });
        return;
      }
    }
    super.add(obj);
  }
}

/** What socket.io-client's `parser` option expects (the shape of socket.io-parser's module). */
export const leanSocketIoParser = { protocol, PacketType, Encoder, Decoder: LeanDecoder };
