import { get, type IncomingMessage } from 'node:http';
import type { ClientReadableStream } from '@grpc/grpc-js';
import type { DomainEvent, StreamDomain } from '@app/contracts';
import type { TransportName } from '@app/client/node';
import { bearer } from '../support/auth';
import type { ChainItem } from '../support/item-chain';
import { SseParser } from '../support/sse-parser';
import type { TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { WsStream } from '../support/websocket-stream';
import { orderStatusClient } from '../grpc/grpc-test-client';
import { RawOrdersClient } from '../ws/raw-orders-client';

/** The transports a reader can stop reading on (a long-poll client holds no stream). */
export type StreamingTransport = Exclude<TransportName, 'longpoll'>;

/**
 * A raw client of one stream that stopped reading its socket once the stream was open,
 * so the service's writes back up and its bounded queue overflows. Items are read with
 * the domain's descriptor (wire names, proto arms), never by a kind's name.
 */
export interface PausedReader {
  readonly items: ChainItem[];
  /** Reads again: what the service queued arrives. */
  resume(): void;
  close(): Promise<void>;
}

type Domain = Pick<StreamDomain, 'kinds' | 'proto'>;

/** An item from its name on the JSON transports and its body; undefined for `end` and the like. */
function jsonItem(domain: Domain, name: string, body: unknown): ChainItem | undefined {
  const b = body as Record<string, unknown>;
  if (name === 'skipped') {
    return { kind: 'skipped', fromSeq: Number(b.fromSeq), toSeq: Number(b.toSeq) };
  }
  if (name === 'reset') {
    return { kind: 'reset', lastSeq: Number((b.snapshot as { lastSeq: number }).lastSeq) };
  }
  if (!domain.kinds.some((k) => k.wireName === name)) return undefined;
  return { kind: 'event', seq: Number((b as unknown as DomainEvent).seq) };
}

/** A `SubscribeResponse` read by its oneof arm: the envelope's, or an event kind's. */
function protoItem(domain: Domain, m: Record<string, unknown>): ChainItem | undefined {
  const arm = m.kind as string;
  if (arm === 'skipped') return jsonItem(domain, arm, m.skipped);
  if (arm === 'reset') {
    const reset = m.reset as { snapshot: unknown };
    return { kind: 'reset', lastSeq: domain.proto.snapshotFromProto(reset.snapshot).lastSeq };
  }
  if (!domain.kinds.some((k) => k.protoArm === arm)) return undefined;
  return { kind: 'event', seq: domain.proto.eventFromProto(arm, m[arm]).seq };
}

async function sseReader(app: TestApp, domain: Domain, path: string): Promise<PausedReader> {
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    get(`${app.httpUrl}${path}`, { headers: { accept: 'text/event-stream', ...bearer() } })
      .on('response', resolve)
      .on('error', reject);
  });
  res.pause();
  const items: ChainItem[] = [];
  const parser = new SseParser();
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    for (const m of parser.push(chunk)) {
      const item = m.event === '' ? undefined : jsonItem(domain, m.event, JSON.parse(m.data));
      if (item !== undefined) items.push(item);
    }
  });
  return {
    items,
    resume: () => res.resume(),
    close: async () => {
      res.destroy();
    },
  };
}

async function websocketReader(app: TestApp, domain: Domain, path: string): Promise<PausedReader> {
  const s = await WsStream.open(`${app.httpUrl.replace(/^http/, 'ws')}${path}`, {
    headers: app.authHeaders,
  });
  s.ws.pause();
  return {
    get items() {
      return s.frames.flatMap((f) => jsonItem(domain, f.type, f.data) ?? []);
    },
    resume: () => s.ws.resume(),
    close: async () => {
      s.close();
      await s.closed;
    },
  };
}

async function socketIoReader(
  app: TestApp,
  domain: Domain,
  streamId: string,
  afterSeq: number,
): Promise<PausedReader> {
  const c = await RawOrdersClient.connect(app.httpUrl);
  const ack = await c.subscribe(streamId, afterSeq);
  if (!ack.ok) throw new Error(`socket.io subscribe refused: ${JSON.stringify(ack)}`);
  c.pause();
  return {
    get items() {
      return c.received.flatMap((r) => jsonItem(domain, r.event, r.payload) ?? []);
    },
    resume: () => c.resume(),
    close: () => c.close(),
  };
}

function grpcReader(
  app: TestApp,
  domain: Domain,
  streamId: string,
  afterSeq: number,
): PausedReader {
  // Its own connection: a shared subchannel would be paused for other calls too.
  const client = orderStatusClient(app.grpcAddress, { 'grpc.use_local_subchannel_pool': 1 });
  const call = client.subscribe({ orderId: streamId, afterSeq }) as unknown as ClientReadableStream<
    Record<string, unknown>
  >;
  const items: ChainItem[] = [];
  call.on('data', (m: Record<string, unknown>) => {
    const item = protoItem(domain, m);
    if (item !== undefined) items.push(item);
  });
  call.on('error', () => undefined);
  // grpc-js stops taking messages off the HTTP/2 stream: the window fills and the
  // server's call.write() returns false.
  call.pause();
  return {
    items,
    resume: () => call.resume(),
    close: async () => {
      call.cancel();
      client.close();
    },
  };
}

/**
 * Opens `streamId` after `afterSeq` on `transport` with a reader that does not read, and
 * resolves once the service's subscription is registered (events published from then on
 * are queued for it).
 */
export async function openPausedReader(
  app: TestApp,
  domain: Domain,
  transport: StreamingTransport,
  streamId: string,
  afterSeq: number,
): Promise<PausedReader> {
  const subscribers = app.bus.subscriberCount(streamId);
  const path = (route: string) => `/v1/orders/${streamId}/${route}?after=${afterSeq}`;
  const reader =
    transport === 'sse'
      ? await sseReader(app, domain, path('stream'))
      : transport === 'websocket'
        ? await websocketReader(app, domain, path('ws'))
        : transport === 'ws'
          ? await socketIoReader(app, domain, streamId, afterSeq)
          : grpcReader(app, domain, streamId, afterSeq);
  await waitFor(
    () => app.bus.subscriberCount(streamId) > subscribers,
    `${transport} subscribed to ${streamId}`,
  );
  return reader;
}
