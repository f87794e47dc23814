import fc from 'fast-check';
import { Decoder, Encoder, PacketType, type Packet } from 'socket.io-parser';
import { SkipReason } from '@app/contracts/stream-envelope';
import {
  type OrderStatusChanged,
  type StreamItem,
  type TrackingUpdated,
} from '@app/order-domain/order-events';
import { OrderStatus } from '@app/order-domain/order-status';
import { streamItemToProto } from '@app/order-domain/proto-codec';
import { payloadEventToProto } from '@app/payload-domain/payload-proto-codec';
import { orderStatusClientCtor } from '../grpc-connector';
import { dispatchSseMessage } from '../sse-connector';
import { SseParser } from '../sse-parser';
import type { StreamHandlers } from '../transport';
import { EVENT_NAMES, parseLongPollBody, toWireEvent, type WireEvent } from '../wire-types';
import { leanEvent } from './lean-event';
import { leanLongPollBody } from './lean-long-poll';
import { leanSubscribeResponse, type SubscribeResponseMsg } from './lean-proto';
import { LeanDecoder } from './lean-socketio-parser';

/**
 * The lean readers against frames made by the encoders the service itself uses
 * (JSON.stringify of the contract's event, socket.io-parser's Encoder, the proto's
 * serializer through proto-loader), compared with the full parse they replace.
 */
const event = (over: Partial<OrderStatusChanged> = {}): OrderStatusChanged => ({
  orderId: 'lt3-17',
  seq: 42,
  status: OrderStatus.Paid,
  publishedAtUs: 1_764_470_000_123_456,
  ...over,
});

const full = (e: OrderStatusChanged): WireEvent => toWireEvent(JSON.parse(JSON.stringify(e)));

// Any string JSON can carry (quotes, backslashes, control characters, astral planes).
const anyEvent = fc.record({
  orderId: fc.string({ unit: 'binary', maxLength: 40 }),
  seq: fc.nat(),
  status: fc.constantFrom(...Object.values(OrderStatus)),
  publishedAtUs: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  reason: fc.option(fc.string({ maxLength: 200 }), { nil: undefined }),
});

const tracking = (over: Partial<TrackingUpdated> = {}): TrackingUpdated => ({
  orderId: 'lt3-17',
  seq: 43,
  status: OrderStatus.Shipped,
  publishedAtUs: 1_764_470_000_223_456,
  location: { lat: 52.520008, lon: -13.404954 },
  etaMs: 1_764_473_600_000,
  ...over,
});

/** The service's SSE frame of an event (sse-frames.ts `itemFrame`). */
const sseFrame = (e: OrderStatusChanged): string =>
  `id: ${e.seq}\nevent: status\ndata: ${JSON.stringify(e)}\n\n`;

describe('leanEvent', () => {
  it('reads what the full parse reads, for any event (property)', () => {
    fc.assert(
      fc.property(anyEvent, (e) => {
        expect(leanEvent(JSON.stringify(e))).toEqual(full(e));
      }),
    );
  });

  it('reads an event bounded inside a larger text', () => {
    const text = `xx${JSON.stringify(event())}yy`;
    expect(leanEvent(text, 2, text.length - 2)).toEqual(full(event()));
  });

  it.each([
    ['no seq', '{"orderId":"a","publishedAtUs":1}'],
    ['a string seq', '{"orderId":"a","seq":"1","publishedAtUs":1}'],
    ['a fractional seq', '{"orderId":"a","seq":1.5,"publishedAtUs":1}'],
    ['a negative time', '{"orderId":"a","seq":1,"publishedAtUs":-1}'],
    ['no orderId', '{"seq":1,"publishedAtUs":1}'],
    ['a cut frame', '{"orderId":"a","seq":1,"publishedAtUs":12'],
  ])('throws on %s', (_name, text) => {
    expect(() => leanEvent(text)).toThrow(TypeError);
  });
});

describe('SSE: SseParser + dispatch, lean', () => {
  const collect = (chunks: readonly string[]): string[] => {
    const out: string[] = [];
    const h: StreamHandlers = {
      onOpen: () => undefined,
      onEvent: (e) => out.push(`event ${e.orderId} ${e.seq} ${e.publishedAtUs}`),
      onReset: (r) => out.push(`reset ${r.lastSeq}`),
      onSkipped: (s) => out.push(`skipped ${s.fromSeq}..${s.toSeq}`),
      onEnd: (reason) => out.push(`end ${reason}`),
      onError: (code) => out.push(`error ${code}`),
    };
    const parser = new SseParser((m) => dispatchSseMessage(m, h));
    for (const c of chunks) parser.feed(c);
    return out;
  };
  const events = [1, 2, 3].map((seq) => event({ seq, reason: 'x'.repeat(seq * 7) }));
  const stream =
    'retry: 2000\n\n' +
    events.map(sseFrame).join(': ping\n\n') +
    `id: 9\nevent: skipped\ndata: ${JSON.stringify({ fromSeq: 4, toSeq: 9, reason: SkipReason.Overflow })}\n\n` +
    `id: 43\nevent: tracking\ndata: ${JSON.stringify(tracking())}\n\n` +
    'event: end\ndata: {"reason":"max_age"}\n\n';
  const expected = [
    ...events.map((e) => `event ${e.orderId} ${e.seq} ${e.publishedAtUs}`),
    'skipped 4..9',
    `event lt3-17 43 ${tracking().publishedAtUs}`,
    'end max_age',
  ];

  it('reads several frames in one chunk', () => {
    expect(collect([stream])).toEqual(expected);
  });

  it('reads the same however the chunks are split, CRLF included (property)', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.array(fc.integer({ min: 0, max: stream.length * 2 }), { maxLength: 12 }),
        (crlf, cuts) => {
          const text = crlf ? stream.replace(/\n/g, '\r\n') : stream;
          const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
          const chunks: string[] = [];
          let prev = 0;
          for (const p of points) {
            chunks.push(text.slice(prev, p));
            prev = p;
          }
          chunks.push(text.slice(prev));
          expect(collect(chunks)).toEqual(expected);
        },
      ),
    );
  });
});

describe('socket.io: LeanDecoder', () => {
  const decodeWith = (D: typeof Decoder, encoded: string): Packet => {
    const d = new D();
    let out: Packet | undefined;
    d.on('decoded', (p: Packet) => (out = p));
    d.add(encoded);
    if (!out) throw new Error('nothing decoded');
    return out;
  };
  const encode = (name: string, data: unknown): string => {
    const [encoded] = new Encoder().encode({
      type: PacketType.EVENT,
      nsp: '/orders',
      data: [name, data],
    }) as string[];
    return encoded;
  };

  it('decodes an event packet of the real encoder to the fields the full decoder gives (property)', () => {
    fc.assert(
      fc.property(anyEvent, fc.constantFrom(...EVENT_NAMES), (e, name) => {
        const encoded = encode(name, e);
        const lean = decodeWith(LeanDecoder, encoded);
        const whole = decodeWith(Decoder, encoded);
        expect(lean.type).toBe(whole.type);
        expect(lean.nsp).toBe(whole.nsp);
        const [leanName, leanData] = lean.data as [string, WireEvent];
        const [wholeName, wholeData] = whole.data as [string, unknown];
        expect(leanName).toBe(wholeName);
        expect(leanData).toEqual(toWireEvent(wholeData));
      }),
    );
  });

  it('leaves every other packet to socket.io-parser', () => {
    for (const encoded of [
      encode('skipped', { fromSeq: 1, toSeq: 2 }),
      encode('end', { reason: 'max_age' }),
      '0/orders,{"sid":"abc"}',
      '3/orders,1[{"ok":true}]',
    ]) {
      expect(decodeWith(LeanDecoder, encoded)).toEqual(decodeWith(Decoder, encoded));
    }
  });

  it('throws on a malformed event packet (socket.io-client closes with a parse error)', () => {
    expect(() => decodeWith(LeanDecoder, '2/orders,["status",{"seq":1}]')).toThrow(TypeError);
  });
});

describe('gRPC: leanSubscribeResponse', () => {
  const method = orderStatusClientCtor().service.Subscribe;
  const encode = (item: StreamItem): Buffer => method.responseSerialize(streamItemToProto(item));
  const fullDecode = (b: Buffer): SubscribeResponseMsg =>
    method.responseDeserialize(b) as SubscribeResponseMsg;

  it('reads the event arm as the full decoder does (property)', () => {
    fc.assert(
      fc.property(anyEvent, (e) => {
        // Protobuf strings are UTF-8: lone surrogates do not survive any encoder.
        const orderId = Buffer.from(e.orderId, 'utf8').toString('utf8');
        const ev = { ...e, orderId, reason: e.reason?.replace(/[^\x20-\x7e]/g, '') };
        const bytes = encode({ kind: 'event', event: ev });
        let fullCalls = 0;
        const lean = leanSubscribeResponse(bytes, (b) => (fullCalls++, fullDecode(b)));
        const whole = fullDecode(bytes).event;
        expect(fullCalls).toBe(0);
        expect(lean).toEqual({
          event: {
            orderId: whole?.orderId,
            seq: Number(whole?.seq),
            publishedAtUs: Number(whole?.publishedAtUs),
          },
        });
      }),
    );
  });

  it('reads the tracking arm (same field numbers) without the full decoder', () => {
    const t = tracking();
    let fullCalls = 0;
    const lean = leanSubscribeResponse(
      encode({ kind: 'tracking', tracking: t }),
      (b) => (fullCalls++, fullDecode(b)),
    );
    expect(fullCalls).toBe(0);
    expect(lean).toEqual({
      tracking: { orderId: t.orderId, seq: t.seq, publishedAtUs: t.publishedAtUs },
    });
  });

  it("reads the payload domain's arm (same field numbers) without the full decoder", () => {
    const p = { orderId: 'lt1-7', seq: 12, publishedAtUs: 1_800_000_000_000_123, payload: 'xy' };
    let fullCalls = 0;
    const lean = leanSubscribeResponse(
      method.responseSerialize({ payload: payloadEventToProto(p) }),
      (b) => (fullCalls++, fullDecode(b)),
    );
    expect(fullCalls).toBe(0);
    expect(lean).toEqual({
      payload: { orderId: 'lt1-7', seq: 12, publishedAtUs: p.publishedAtUs },
    });
  });

  it('hands every other arm to the full decoder', () => {
    const bytes = encode({
      kind: 'skipped',
      skipped: { fromSeq: 3, toSeq: 8, reason: SkipReason.Overflow },
    });
    expect(leanSubscribeResponse(bytes, fullDecode)).toEqual(fullDecode(bytes));
  });

  it('throws on a truncated message', () => {
    const bytes = encode({ kind: 'event', event: event() });
    expect(() => leanSubscribeResponse(bytes.subarray(0, bytes.length - 3), fullDecode)).toThrow(
      TypeError,
    );
  });
});

describe('long-poll: leanLongPollBody', () => {
  const body = (events: OrderStatusChanged[], extra: object = {}): string =>
    JSON.stringify({
      orderId: 'lt3-17',
      events,
      ...extra,
      next: events.at(-1)?.seq ?? 0,
      completed: false,
    });

  it('reads what the full parser reads, for any batch (property)', () => {
    fc.assert(
      fc.property(fc.array(anyEvent, { maxLength: 5 }), fc.boolean(), (events, completed) => {
        const text = body(events).replace('"completed":false', `"completed":${completed}`);
        expect(leanLongPollBody(text)).toEqual(parseLongPollBody(text));
      }),
    );
  });

  // Found by the property above (seed -9375222): counting braces without skipping strings
  // cut the first element at the `}` inside the second's string and read one event
  // where there were two, a miscount the load test would have reported as loss.
  it('skips braces, brackets and escaped quotes inside strings', () => {
    const events = [
      event({ seq: 1, reason: '{' }),
      event({ seq: 2, reason: '}' }),
      event({ seq: 3, reason: '\\"{' }),
      event({ seq: 4, reason: '}"' }),
      event({ seq: 5, reason: ']' }),
    ];
    const text = body(events);
    expect(leanLongPollBody(text)).toEqual(parseLongPollBody(text));
    expect(leanLongPollBody(text).events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
  });

  it('reads tracking updates (a nested location) beside status changes', () => {
    const text = JSON.stringify({
      orderId: 'lt3-17',
      events: [
        { type: 'status', ...event({ seq: 42 }) },
        { type: 'tracking', ...tracking({ seq: 43 }) },
        { type: 'tracking', ...tracking({ seq: 44 }) },
      ],
      next: 44,
      completed: false,
    });
    expect(leanLongPollBody(text)).toEqual(parseLongPollBody(text));
    expect(leanLongPollBody(text).events.map((e) => e.seq)).toEqual([42, 43, 44]);
  });

  it('falls back to the full parser for resets and skipped ranges', () => {
    const text = body([event({ seq: 9 })], {
      skipped: { fromSeq: 3, toSeq: 8, reason: 'overflow' },
    });
    expect(leanLongPollBody(text)).toEqual(parseLongPollBody(text));
    expect(leanLongPollBody(text).skipped).toEqual({ fromSeq: 3, toSeq: 8 });
  });

  it('still rejects a malformed body', () => {
    expect(() => leanLongPollBody('{"events":[{"seq":1}],"next":1}')).toThrow(TypeError);
  });
});
