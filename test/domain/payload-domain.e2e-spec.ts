import { Subject } from 'rxjs';
import {
  eventOf,
  isReset,
  itemFromProto,
  itemToProto,
  ResetReason,
  type StreamEndReason,
  type StreamItemOf,
} from '@app/contracts';
import { StreamEventBus, OverflowPolicy, type BusStore, type DeliverySink } from '@app/event-bus';
import { wireItem } from '../../libs/client/src/transports/wire-items';
import { pollBodyJson } from '../../apps/order-status/src/transports/long-poll/poll-answer';
import { itemFrame } from '../../apps/order-status/src/transports/sse/sse-frames';
import { itemFrame as websocketItemFrame } from '../../apps/order-status/src/transports/websocket/websocket-frames';
import { PAYLOAD_DOMAIN, type PayloadEvent, type PayloadSnapshot } from '@app/payload-domain';
import type { StreamOwnership } from '@app/store';

type PayloadItem = StreamItemOf<PayloadEvent, PayloadSnapshot>;

const EVENT: PayloadEvent = {
  orderId: 'p-1',
  seq: 7,
  publishedAtUs: 1_000,
  payload: 'x'.repeat(16),
};
const ITEM: PayloadItem = { kind: 'event', event: EVENT };

/** The bus's side of a store of payload streams: every event kept, announced on `events$`. */
class PayloadStore implements BusStore<PayloadEvent, PayloadSnapshot> {
  readonly domain = PAYLOAD_DOMAIN;
  private readonly feed = new Subject<PayloadEvent>();
  readonly events$ = this.feed.asObservable();
  private readonly streams = new Map<string, PayloadEvent[]>();

  publish(orderId: string, payload: string): PayloadEvent {
    const events = this.streams.get(orderId) ?? [];
    this.streams.set(orderId, events);
    const event = { orderId, seq: events.length + 1, publishedAtUs: Date.now() * 1000, payload };
    events.push(event);
    this.feed.next(event);
    return event;
  }

  async getSnapshot(orderId: string): Promise<PayloadSnapshot | undefined> {
    const last = this.streams.get(orderId)?.at(-1);
    return last === undefined ? undefined : this.domain.fold(undefined, last);
  }

  /** Streams here have no owner. */
  async getOwnership(orderId: string): Promise<StreamOwnership | undefined> {
    return this.streams.has(orderId) ? {} : undefined;
  }

  async readHistory(orderId: string, afterSeq: number): Promise<PayloadEvent[] | undefined> {
    return this.streams.get(orderId)?.filter((e) => e.seq > afterSeq);
  }
}

/** What the bus delivered, typed as the payload domain's items. */
class PayloadSink implements DeliverySink<PayloadEvent, PayloadSnapshot> {
  readonly items: PayloadItem[] = [];
  accepting = true;
  private resume?: () => void;

  write(item: PayloadItem): boolean {
    this.items.push(item);
    return this.accepting;
  }

  onDrain(resume: () => void): void {
    this.resume = resume;
  }

  end(_reason: StreamEndReason): void {}

  drain(): void {
    this.accepting = true;
    this.resume?.();
  }

  /** The payloads delivered: read off the typed events, no cast. */
  get payloads(): string[] {
    return this.items.flatMap((it) => eventOf(it)?.payload ?? []);
  }
}

describe('the payload domain through the engine', () => {
  it('is framed on SSE under its own wire name, and the client reads it back', () => {
    const frame = itemFrame(PAYLOAD_DOMAIN, ITEM);
    expect(frame).toBe(`id: 7\nevent: payload\ndata: ${JSON.stringify(EVENT)}\n\n`);
    const data = /^data: (.*)$/m.exec(frame)?.[1] ?? '';
    expect(wireItem(PAYLOAD_DOMAIN, 'payload', JSON.parse(data))).toEqual(ITEM);
    // The order domain's names mean nothing here.
    expect(wireItem(PAYLOAD_DOMAIN, 'status', EVENT)).toBeUndefined();
  });

  it('is framed on the raw WebSocket under its own wire name', () => {
    expect(JSON.parse(websocketItemFrame(PAYLOAD_DOMAIN, ITEM))).toEqual({
      type: 'payload',
      data: EVENT,
    });
  });

  it('is tagged with its wire name in a long-poll answer', () => {
    const body = JSON.parse(
      pollBodyJson(PAYLOAD_DOMAIN, 'p-1', 6, { items: [ITEM], completed: false }),
    ) as {
      events: { type: string }[];
      next: number;
    };
    expect(body.events).toEqual([{ type: 'payload', ...EVENT }]);
    expect(body.next).toBe(7);
  });

  it('travels in its own SubscribeResponse arm, beside the envelope', () => {
    const message = itemToProto(PAYLOAD_DOMAIN, ITEM);
    expect(Object.keys(message)).toEqual(['payload']);
    expect(itemFromProto(PAYLOAD_DOMAIN, message)).toEqual(ITEM);
    const reset: PayloadItem = {
      kind: 'reset',
      reset: {
        reason: ResetReason.Gap,
        snapshot: { orderId: 'p-1', lastSeq: 7, updatedAtUs: 1_000 },
      },
    };
    expect(itemFromProto(PAYLOAD_DOMAIN, itemToProto(PAYLOAD_DOMAIN, reset))).toEqual(reset);
  });

  describe('on a bus typed by its own event and snapshot', () => {
    let store: PayloadStore;
    let bus: StreamEventBus<PayloadEvent, PayloadSnapshot>;

    beforeEach(() => {
      store = new PayloadStore();
      bus = new StreamEventBus(store, { maxStreamAgeMs: 0 });
      bus.start();
    });

    afterEach(() => bus.stop());

    it('replays after the resume point, then delivers live events', async () => {
      for (const payload of ['a', 'b', 'c']) store.publish('p-1', payload);
      const sink = new PayloadSink();
      const sub = await bus.open('p-1', 1, sink);
      store.publish('p-1', 'd');
      expect(sink.payloads).toEqual(['b', 'c', 'd']);
      sub.close();
      expect(bus.subscriberCount()).toBe(0);
    });

    it('resets with its snapshot past the last seq, and marks what a slow reader missed', async () => {
      store.publish('p-1', 'a');
      const ahead = new PayloadSink();
      (await bus.open('p-1', 5, ahead)).close();
      const [reset] = ahead.items;
      expect(isReset(reset) && reset.reset).toMatchObject({
        reason: ResetReason.AheadOfLastSeq,
        snapshot: { orderId: 'p-1', lastSeq: 1 },
      });

      const slow = new PayloadSink();
      slow.accepting = false;
      const sub = await bus.open('p-1', 1, slow, {
        queueCapacity: 2,
        overflowPolicy: OverflowPolicy.DropOldest,
      });
      for (const payload of ['b', 'c', 'd', 'e']) store.publish('p-1', payload);
      slow.drain();
      expect(slow.items.map((it) => it.kind)).toEqual(['event', 'skipped', 'event']);
      expect(slow.payloads).toEqual(['b', 'e']);
      sub.close();
    });
  });
});
