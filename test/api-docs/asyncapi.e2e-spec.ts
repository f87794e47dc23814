import { cursorAfter, ORDER_DOMAIN, OrderStatus, type StreamItem } from '@app/order-domain';
import { DiagnosticSeverity } from '@asyncapi/parser';
import { PATH_METADATA } from '@nestjs/common/constants';
import {
  ErrorCode,
  errorBody,
  GatewayError,
  ResetReason,
  SkipReason,
  StreamEndReason,
} from '@app/contracts';
import { loadConfig } from '../../apps/order-status/src/config/app-config';
import { endFrame, itemFrame } from '../../apps/order-status/src/transports/sse/sse-frames';
import { SseController } from '../../apps/order-status/src/transports/sse/sse.controller';
import { LongPollController } from '../../apps/order-status/src/transports/long-poll/long-poll.controller';
import { pollBody } from '../../apps/order-status/src/transports/long-poll/poll-answer';
import { ORDERS_NAMESPACE } from '../../apps/order-status/src/transports/ws/orders-ws.events';
import * as websocketFrames from '../../apps/order-status/src/transports/websocket/websocket-frames';
import { AsyncApiDocument, type AsyncApiJson, type Schema } from './asyncapi-document';
import { TypeReader, type Field } from './type-reader';

const CONTRACTS = 'libs/contracts/src/index.ts';
const ORDER_DOMAIN_FILE = 'libs/order-domain/src/index.ts';
const WS_EVENTS = 'apps/order-status/src/transports/ws/orders-ws.events.ts';
const POLL_ANSWER = 'apps/order-status/src/transports/long-poll/poll-answer.ts';

/*
 * One sample per stream item kind, every optional field set, so each payload the
 * transports produce from it shows all its fields. The mapped type makes a new kind a
 * type error here; the kinds are also compared with the contract's union at run time.
 */
const SNAPSHOT = {
  orderId: 'order-1',
  status: OrderStatus.OutForDelivery,
  lastSeq: 7,
  updatedAtUs: 1_700_000_000_000_000,
  tracking: { location: { lat: 52.52, lon: 13.405 }, etaMs: 1_700_000_600_000 },
  ownerId: 'customer-1',
};
const SAMPLES: { [K in StreamItem['kind']]: Extract<StreamItem, { kind: K }> } = {
  event: {
    kind: 'event',
    event: {
      orderId: 'order-1',
      seq: 8,
      status: OrderStatus.Cancelled,
      previousStatus: OrderStatus.OutForDelivery,
      publishedAtUs: 1_700_000_000_000_001,
      reason: 'customer asked',
    },
  },
  tracking: {
    kind: 'tracking',
    tracking: {
      orderId: 'order-1',
      seq: 9,
      status: OrderStatus.OutForDelivery,
      publishedAtUs: 1_700_000_000_000_002,
      location: { lat: -33.86, lon: 151.21 },
      etaMs: 1_700_000_900_000,
    },
  },
  reset: { kind: 'reset', reset: { reason: ResetReason.BeyondRetention, snapshot: SNAPSHOT } },
  skipped: { kind: 'skipped', skipped: { fromSeq: 3, toSeq: 6, reason: SkipReason.Overflow } },
};

/** `data:` JSON, `event:` and `id:` of one SSE frame. */
function parseFrame(frame: string): { event?: string; id?: string; data: unknown } {
  const fields = new Map<string, string>();
  for (const line of frame.split('\n')) {
    const at = line.indexOf(': ');
    if (at > 0) fields.set(line.slice(0, at), line.slice(at + 2));
  }
  return {
    event: fields.get('event'),
    id: fields.get('id'),
    data: JSON.parse(fields.get('data') ?? 'null'),
  };
}

/** A schema's fields as the TypeReader reports a type's. */
function schemaFields(schema: Schema): Field[] {
  const required = new Set(schema.required ?? []);
  return Object.keys(schema.properties ?? {})
    .map((name) => ({ name, optional: !required.has(name) }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** `/v1/orders/:orderId/stream` as AsyncAPI writes it. */
function routeOf(controller: object, handler: (...args: never[]) => unknown): string {
  const base = Reflect.getMetadata(PATH_METADATA, controller) as string;
  const path = Reflect.getMetadata(PATH_METADATA, handler) as string;
  return `/${base}/${path}`.replace(/:(\w+)/g, '{$1}');
}

const sorted = (values: Iterable<string>) => [...values].sort();

describe('docs/asyncapi.yaml', () => {
  let api: AsyncApiDocument;
  let doc: AsyncApiJson;
  let types: TypeReader;

  /** Asserts `payload` is a valid message `name` of the channel at `address`. */
  function expectValid(what: string, address: string, name: string, payload: unknown): void {
    expect([what, api.errors(address, name, payload)]).toEqual([what, []]);
  }

  const channel = (address: string) => api.channel(address);

  beforeAll(async () => {
    api = await AsyncApiDocument.load();
    doc = api.json;
    types = new TypeReader([CONTRACTS, ORDER_DOMAIN_FILE, WS_EVENTS, POLL_ANSWER]);
  });

  it('is a valid AsyncAPI 3 document (@asyncapi/parser: no error, no warning)', () => {
    // Information and hints (e.g. "3.1 exists") are not problems.
    const problems: readonly number[] = [DiagnosticSeverity.Error, DiagnosticSeverity.Warning];
    const found = api.diagnostics
      .filter((d) => problems.includes(d.severity))
      .map((d) => `${d.code} at ${d.path.join('.')}: ${d.message}`);
    expect(found).toEqual([]);
  });

  it('lists exactly the values of the contract enums', () => {
    const { schemas } = doc.components;
    const expected: Record<string, string[]> = {
      OrderStatus: Object.values(OrderStatus),
      ResetReason: Object.values(ResetReason),
      SkipReason: Object.values(SkipReason),
      StreamEndReason: Object.values(StreamEndReason),
      ErrorCode: Object.values(ErrorCode),
    };
    for (const [name, values] of Object.entries(expected)) {
      expect([name, sorted(schemas[name]?.enum ?? [])]).toEqual([name, sorted(values)]);
    }
  });

  it('describes every field of the contract and transport types, required exactly when the type requires it', () => {
    const { schemas } = doc.components;
    const pairs: [string, string, string][] = [
      ['OrderStatusChanged', ORDER_DOMAIN_FILE, 'OrderStatusChanged'],
      ['TrackingUpdated', ORDER_DOMAIN_FILE, 'TrackingUpdated'],
      ['GeoPoint', ORDER_DOMAIN_FILE, 'GeoPoint'],
      ['Tracking', ORDER_DOMAIN_FILE, 'Tracking'],
      ['OrderSnapshot', ORDER_DOMAIN_FILE, 'OrderSnapshot'],
      ['StreamReset', ORDER_DOMAIN_FILE, 'StreamReset'],
      ['StreamSkipped', CONTRACTS, 'StreamSkipped'],
      ['SocketStreamSkipped', WS_EVENTS, 'StreamSkippedPayload'],
      ['SocketStreamEnd', WS_EVENTS, 'StreamEnd'],
      ['SubscribeRequest', WS_EVENTS, 'SubscribeRequest'],
      ['UnsubscribeRequest', WS_EVENTS, 'UnsubscribeRequest'],
      ['ErrorAck', WS_EVENTS, 'ErrorAck'],
      ['PollBody', POLL_ANSWER, 'PollBody'],
    ];
    for (const [schema, file, type] of pairs) {
      const documented = schemas[schema];
      if (documented === undefined) throw new Error(`no schema ${schema}`);
      expect([schema, schemaFields(documented)]).toEqual([
        schema,
        types.fields(types.type(file, type)),
      ]);
    }
    const errorDetail = types.property(types.type(CONTRACTS, 'ErrorBody'), 'error');
    expect(schemaFields(schemas.ErrorDetail ?? {})).toEqual(types.fields(errorDetail));
    // A long-poll event is either kind with its name in `type`.
    const named = types
      .members(types.type(ORDER_DOMAIN_FILE, 'NamedEvent'))
      .map((t) => types.fields(t));
    expect(
      ['PolledStatusChange', 'PolledTrackingUpdate'].map((n) => schemaFields(schemas[n] ?? {})),
    ).toEqual(expect.arrayContaining(named));
    // Each ack: its success arm and the error arm.
    for (const ack of ['SubscribeAck', 'UnsubscribeAck']) {
      const arms = (schemas[ack]?.oneOf ?? []).map(schemaFields);
      const members = types.members(types.type(WS_EVENTS, ack)).map((t) => types.fields(t));
      expect([ack, arms]).toEqual([ack, expect.arrayContaining(members)]);
      expect(arms).toHaveLength(members.length);
    }
  });

  it('has a sample here for every kind of stream item in the contract', () => {
    const kinds = types
      .members(types.type(ORDER_DOMAIN_FILE, 'StreamItem'))
      .flatMap((t) => types.stringLiterals(types.property(t, 'kind')));
    expect(sorted(Object.keys(SAMPLES))).toEqual(sorted(kinds));
  });

  it('SSE: the channel is the route, and every frame the transport writes is a documented message', () => {
    const address = routeOf(SseController, SseController.prototype.stream);
    const written = new Set<string>();
    for (const item of Object.values(SAMPLES) as StreamItem[]) {
      const frame = parseFrame(itemFrame(ORDER_DOMAIN, item));
      const name = frame.event ?? 'message';
      written.add(name);
      expect([name, frame.id]).toEqual([name, String(cursorAfter(item))]);
      expectValid(`SSE ${name}`, address, name, frame.data);
    }
    for (const reason of Object.values(StreamEndReason)) {
      const frame = parseFrame(endFrame(reason));
      const name = frame.event ?? 'message';
      written.add(name);
      // `end` moves no cursor: it has no id.
      expect([name, frame.id]).toEqual([name, undefined]);
      expectValid(`SSE end ${reason}`, address, name, frame.data);
    }
    // At shutdown the end carries the reconnect advice in its data as well.
    expectValid(
      'SSE end with advice',
      address,
      'end',
      parseFrame(endFrame(StreamEndReason.Shutdown, 1_234)).data,
    );
    const documented = Object.values(channel(address).messages).map((m) => m.name);
    expect(sorted(documented)).toEqual(sorted(written));
  });

  it('raw WebSocket: every frame the transport writes is a documented message', () => {
    const address = '/v1/orders/{orderId}/ws';
    const frames = [
      websocketFrames.openFrame('order-1', 7),
      ...(Object.values(SAMPLES) as StreamItem[]).map((item) =>
        websocketFrames.itemFrame(ORDER_DOMAIN, item),
      ),
      ...Object.values(StreamEndReason).map((reason) => websocketFrames.endFrame(reason)),
      websocketFrames.endFrame(StreamEndReason.Shutdown, 1_234),
      ...Object.values(ErrorCode).map((code) =>
        websocketFrames.errorFrame(new GatewayError(code, 'no', 5)),
      ),
    ];
    const written = new Set<string>();
    for (const text of frames) {
      const frame = JSON.parse(text) as { type: string };
      written.add(frame.type);
      expectValid(`websocket ${text}`, address, frame.type, frame);
    }
    const documented = Object.values(channel(address).messages).map((m) => m.name);
    expect(sorted(documented)).toEqual(sorted(written));
  });

  it('socket.io: the channel is the namespace and its messages are the typed event maps (asyncapi-live checks what is emitted)', () => {
    const address = ORDERS_NAMESPACE;
    // The envelope's events are the engine's, the event kinds' the domain's.
    const toClient = [
      ...types.keys(types.type(WS_EVENTS, 'ServerToClientEvents')),
      ...types.keys(types.type(ORDER_DOMAIN_FILE, 'DomainSocketEvents')),
    ];
    const toServer = types.keys(types.type(WS_EVENTS, 'ClientToServerEvents'));
    const documented = Object.values(channel(address).messages).map((m) => m.name);
    // Requests come with an ack (the callback's argument), documented as `<event>Ack`.
    expect(sorted(documented)).toEqual(
      sorted([...toClient, ...toServer, ...toServer.map((e) => `${e}Ack`)]),
    );

    // An error ack as the gateway builds it.
    const errorAck = { ok: false, ...errorBody(new GatewayError(ErrorCode.NotFound, 'no order')) };
    for (const ack of toServer.map((e) => `${e}Ack`)) {
      expectValid(`socket.io ${ack}`, address, ack, errorAck);
    }
  });

  it('long-poll: the channel is the route, and every answer the transport builds is a documented message', () => {
    const address = routeOf(LongPollController, LongPollController.prototype.poll);
    const items = Object.values(SAMPLES) as StreamItem[];
    for (const item of items) {
      const body = pollBody(ORDER_DOMAIN, 'order-1', 2, { items: [item], completed: false });
      expectValid(`poll ${item.kind}`, address, 'pollAnswer', body);
    }
    const events = items.filter((i) => i.kind === 'event' || i.kind === 'tracking');
    const batch = pollBody(ORDER_DOMAIN, 'order-1', 2, {
      items: [SAMPLES.reset, ...events],
      completed: true,
    });
    expectValid('poll batch', address, 'pollAnswer', batch);
  });

  it('names the credentials each channel really accepts', () => {
    const sse = routeOf(SseController, SseController.prototype.stream);
    const poll = routeOf(LongPollController, LongPollController.prototype.poll);
    const schemes = (address: string) =>
      Object.values(doc.operations)
        .filter((o) => o.channel.address === address)
        .flatMap((o) => o.security ?? []);
    const cookie = loadConfig({}).auth.cookieName;
    expect(schemes(sse)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'http' }),
        expect.objectContaining({ type: 'httpApiKey', in: 'query', name: 'ticket' }),
        expect.objectContaining({ type: 'httpApiKey', in: 'cookie', name: cookie }),
      ]),
    );
    expect(schemes(poll).map((s) => s.type)).toEqual(['http']);
    expect(schemes(ORDERS_NAMESPACE).every((s) => s.type === 'http')).toBe(true);
  });
});
