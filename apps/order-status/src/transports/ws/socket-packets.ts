import {
  EncodeOnce,
  eventOf,
  kindOf,
  type DomainEvent,
  type StreamDomain,
  type StreamItemOf,
} from '@app/contracts';
import type { OrdersSocket } from './orders-ws.events';

/** socket.io-parser's EVENT packet type. */
const EVENT_PACKET = 2;

/**
 * What socket.io's in-memory adapter uses to encode a broadcast once for every socket of
 * a room. Private in the typings; verified against socket.io-adapter 2.5
 * (`dist/in-memory-adapter.js`):
 * - `_encode(packet, packetOpts)` returns the socket.io-parser encoding of `packet`, and
 *   when the packet is one string and `ws` is present it also sets
 *   `packetOpts.wsPreEncodedFrame`: the whole WebSocket frame (engine.io's `4` prefix
 *   included), which engine.io's websocket transport writes as is (`sendFrame`);
 * - `broadcast()` then calls `socket.client.writeToEngine(encoded, packetOpts)` per socket.
 */
interface EncodingAdapter {
  _encode(packet: { type: number; nsp: string; data: unknown[] }, opts: PacketOptions): unknown[];
}

/**
 * socket.io's Client `_packet(packets, { preEncoded: true })` (public in the typings):
 * writes already encoded packets to the engine, as `socket.emit` does after encoding,
 * skipping nothing else (it checks the connection is open first).
 */
interface PacketClient {
  _packet(packets: unknown, opts: PacketOptions): void;
}

type PacketOptions = Record<string, unknown>;

interface EncodedPacket {
  readonly packets: unknown[];
  /** Shared by every socket (engine.io only sets `compress` on it, to the same value). */
  readonly opts: PacketOptions;
}

/**
 * One socket.io encoding per event, written to every socket that receives the event,
 * the way socket.io's own `io.to(room).emit()` does, but per socket so that each keeps
 * its bounded queue, its back-pressure (EngineBackpressure counts the same engine
 * packets) and its resume point. Per namespace adapter: the encoding names the
 * namespace.
 */
export class SocketPackets {
  /** Encodings made by every instance (one per namespace adapter), for tests. */
  static encodingsTotal = 0;
  private readonly cache: EncodeOnce<EncodedPacket, StreamItemOf>;

  constructor(
    private readonly adapter: EncodingAdapter,
    private readonly nsp: string,
    private readonly domain: StreamDomain,
  ) {
    this.cache = new EncodeOnce<EncodedPacket, StreamItemOf>({
      encode: (item) => this.encode(item),
      sizeOf: (p) =>
        p.packets.reduce<number>((n, s) => n + (typeof s === 'string' ? s.length : 0), 0),
    });
  }

  /** Encodings made so far (tests count them). */
  get encodings(): number {
    return this.cache.encodings;
  }

  /** Writes an event item to `socket`; false for other items (the caller emits those). */
  write(socket: OrdersSocket, item: StreamItemOf): boolean {
    if (eventOf(item) === undefined) return false;
    const { packets, opts } = this.cache.get(item);
    (socket.client as unknown as PacketClient)._packet(packets, opts);
    return true;
  }

  private encode(item: StreamItemOf): EncodedPacket {
    SocketPackets.encodingsTotal++;
    const event = eventOf(item) as DomainEvent;
    const name = kindOf(this.domain, event).wireName;
    const opts: PacketOptions = { preEncoded: true };
    const packets = this.adapter._encode(
      { type: EVENT_PACKET, nsp: this.nsp, data: [name, event] },
      opts,
    );
    return { packets, opts };
  }
}

const byAdapter = new WeakMap<object, SocketPackets | null>();

/**
 * The encoder of `socket`'s namespace, or undefined when its adapter cannot encode once
 * (another adapter than socket.io's in-memory one): the caller then emits per socket.
 */
export function socketPackets(
  socket: OrdersSocket,
  domain: StreamDomain,
): SocketPackets | undefined {
  const adapter = socket.nsp.adapter as unknown as Partial<EncodingAdapter>;
  let packets = byAdapter.get(adapter);
  if (packets === undefined) {
    const client = socket.client as unknown as Partial<PacketClient>;
    packets =
      typeof adapter._encode === 'function' && typeof client._packet === 'function'
        ? new SocketPackets(adapter as EncodingAdapter, socket.nsp.name, domain)
        : null;
    byAdapter.set(adapter, packets);
  }
  return packets ?? undefined;
}
