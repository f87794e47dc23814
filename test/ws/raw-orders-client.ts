import { WebSocket, type RawData } from 'ws';
import type { OrderEvent } from '@app/order-domain';
import { PAYLOAD_DOMAIN } from '@app/payload-domain';
import {
  ORDERS_NAMESPACE,
  type SubscribeAck,
} from '../../apps/order-status/src/transports/ws/orders-ws.events';
import { DEFAULT_TEST_TOKEN } from '../support/auth';
import { once } from '../support/wait-for';

const NSP_PREFIX = `${ORDERS_NAMESPACE},`;
/** The event names of the domains the service carries: the order's two, the payload's. */
const EVENT_NAMES: readonly string[] = [
  'status',
  'tracking',
  ...PAYLOAD_DOMAIN.kinds.map((k) => k.wireName),
];

/**
 * A socket.io client written against the wire protocol (engine.io v4 over a bare `ws`
 * WebSocket), so a test can do what socket.io-client cannot: stop reading. `pause()`
 * pauses the TCP socket; the kernel buffers fill and the server's websocket transport
 * stays unwritable, exactly like a consumer that stopped reading.
 *
 * Packets: engine.io `0` open, `2` ping / `3` pong, `4` message; inside a message,
 * socket.io `0` connect, `2` event, `3` ack, with `/orders,` and an ack id before the JSON.
 */
export class RawOrdersClient {
  /** Events received (status changes and tracking updates, or payloads), in order. */
  readonly events: OrderEvent[] = [];
  /** Every server event (`status`, `reset`, `skipped`, `end`), in arrival order. */
  readonly received: { readonly event: string; readonly payload: unknown }[] = [];
  sid = '';
  private readonly acks = new Map<number, (ack: SubscribeAck) => void>();
  private nextAckId = 1;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: RawData) => this.onFrame(toText(data)));
  }

  static async connect(httpUrl: string): Promise<RawOrdersClient> {
    const ws = new WebSocket(
      `${httpUrl.replace(/^http/, 'ws')}/socket.io/?EIO=4&transport=websocket`,
    );
    const client = new RawOrdersClient(ws);
    const joined = new Promise<void>((resolve) => (client.onJoined = resolve));
    await once(ws, 'open');
    await joined;
    return client;
  }

  subscribe(orderId: string, afterSeq: number): Promise<SubscribeAck> {
    const id = this.nextAckId++;
    const ack = new Promise<SubscribeAck>((resolve) => this.acks.set(id, resolve));
    this.ws.send(`42${NSP_PREFIX}${id}${JSON.stringify(['subscribe', { orderId, afterSeq }])}`);
    return ack;
  }

  /** Stops reading from the TCP socket (nothing is consumed until `resume()`). */
  pause(): void {
    this.ws.pause();
  }

  resume(): void {
    this.ws.resume();
  }

  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    const closed = once(this.ws, 'close');
    this.ws.terminate();
    await closed;
  }

  private onJoined: () => void = () => {};

  private onFrame(frame: string): void {
    const engineType = frame[0];
    // The namespace CONNECT packet carries the handshake `auth` payload.
    if (engineType === '0') {
      this.ws.send(`40${NSP_PREFIX}${JSON.stringify({ token: DEFAULT_TEST_TOKEN })}`);
    }
    if (engineType === '2') this.ws.send('3');
    if (engineType !== '4' || !frame.slice(2).startsWith(NSP_PREFIX)) return;
    const ioType = frame[1];
    const rest = frame.slice(2 + NSP_PREFIX.length);
    const [, ackId, json] = /^(\d*)(.*)$/s.exec(rest) ?? [];
    const body: unknown = JSON.parse(json);
    if (ioType === '0') {
      this.sid = (body as { sid: string }).sid;
      this.onJoined();
    } else if (ioType === '3') {
      this.acks.get(Number(ackId))?.((body as [SubscribeAck])[0]);
      this.acks.delete(Number(ackId));
    } else if (ioType === '2') {
      const [event, payload] = body as [string, unknown];
      this.received.push({ event, payload });
      if (EVENT_NAMES.includes(event)) this.events.push(payload as OrderEvent);
    }
  }
}

/** socket.io's JSON packets arrive as text frames; ws hands them over as Buffers. */
function toText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  return Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)]).toString('utf8');
}
