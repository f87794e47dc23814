import {
  eventOf,
  isReset,
  isSkipped,
  kindOf,
  type DomainEvent,
  type StreamDomain,
  type StreamEndReason,
  type StreamItemOf,
} from '@app/contracts';
import type { DeliverySink } from '@app/event-bus';
import type { EngineBackpressure } from './engine-backpressure';
import type { OrdersSocket } from './orders-ws.events';
import { socketPackets } from './socket-packets';

/**
 * Delivers one order's stream to a socket: each event under its kind's wire name in the
 * domain, `reset` with the snapshot, `skipped` for events dropped on overflow, `end`
 * with the reason.
 *
 * Held until `open()`: the bus starts pumping (the replay, even `end` for a finished
 * order) inside `bus.open()`, before the gateway has sent the `subscribe` ack. A client
 * must see the ack first, so the first item is parked and the sink reports "full"; the
 * bus keeps the rest in its bounded queue. `open()` (called right after the ack) sends the
 * parked item and lets the bus resume.
 *
 * `discard()` silences the sink for good (unsubscribed, replaced, socket gone) even while
 * `bus.open()` is still pending and the subscription handle does not exist yet.
 */
/** `socket.emit` for an event name only known at run time. */
interface DomainEmitter {
  emit(name: string, event: DomainEvent): boolean;
}

export class SocketSink implements DeliverySink {
  private opened = false;
  private discarded = false;
  private parked: StreamItemOf | undefined;
  private parkedEnd: StreamEndReason | undefined;
  private parkedResume: (() => void) | undefined;
  private retryAfterMs: number | undefined;

  constructor(
    private readonly socket: OrdersSocket,
    private readonly orderId: string,
    private readonly backpressure: EngineBackpressure,
    private readonly domain: StreamDomain,
    /** Told when the bus ended the stream, so the socket's slot is freed at once. */
    private readonly onEnd: () => void,
  ) {}

  write(item: StreamItemOf): boolean {
    if (this.discarded) return false; // the pump stops; the subscription is being closed
    if (!this.opened) {
      this.parked = item;
      return false;
    }
    this.send(item);
    return !this.backpressure.isFull();
  }

  onDrain(resume: () => void): void {
    if (this.discarded) return;
    if (!this.opened) this.parkedResume = resume;
    else this.backpressure.whenDrained(resume);
  }

  end(reason: StreamEndReason, retryAfterMs?: number): void {
    if (this.discarded) return;
    this.onEnd();
    this.retryAfterMs = retryAfterMs;
    if (!this.opened) this.parkedEnd = reason;
    else this.emitEnd(reason);
  }

  /** The ack has been sent: deliver what was parked and let the bus continue. */
  open(): void {
    if (this.opened || this.discarded) return;
    this.opened = true;
    if (this.parked !== undefined) this.send(this.parked);
    this.parked = undefined;
    if (this.parkedEnd !== undefined) {
      this.emitEnd(this.parkedEnd);
      return;
    }
    const resume = this.parkedResume;
    this.parkedResume = undefined;
    if (resume === undefined) return;
    if (this.backpressure.isFull()) this.backpressure.whenDrained(resume);
    else resume();
  }

  discard(): void {
    this.discarded = true;
    this.parked = undefined;
    this.parkedResume = undefined;
  }

  private emitEnd(reason: StreamEndReason): void {
    const advice = this.retryAfterMs;
    this.socket.emit('end', {
      orderId: this.orderId,
      reason,
      ...(advice !== undefined ? { retryAfterMs: advice } : {}),
    });
  }

  private send(item: StreamItemOf): void {
    // Events: the namespace's one encoding, shared by every socket that gets the event.
    if (socketPackets(this.socket, this.domain)?.write(this.socket, item) === true) return;
    if (isReset(item)) {
      this.socket.emit('reset', item.reset);
    } else if (isSkipped(item)) {
      // The payload names no order: add it, as `end` does, for clients of several orders.
      this.socket.emit('skipped', { orderId: this.orderId, ...item.skipped });
    } else {
      const event = eventOf(item) as DomainEvent;
      // The event map types the domain's events by name; the name comes from the domain here.
      (this.socket as unknown as DomainEmitter).emit(kindOf(this.domain, event).wireName, event);
    }
  }
}
