import { createServer, type IncomingMessage } from 'node:http';
import { createSecureServer, type Http2ServerRequest } from 'node:http2';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { generate } from 'selfsigned';
import { Server as IoServer } from 'socket.io';
import { WebSocketServer, type WebSocket } from 'ws';
import { ORDER_STATUS_PROTO_PATH, PROTO_LOADER_OPTIONS } from '@app/contracts/proto-path';
import {
  adminAnswer,
  holdPoll,
  metricsText,
  nameOf,
  orderBody,
  pollBody,
  SNAPSHOT_ROUTE,
} from './bare-api';
import { isPayload, isTracking, OrderLog, statusOf, type BareEvent } from './order-log';

/**
 * The same wire format as the service (SSE frames, long-poll bodies, socket.io events,
 * raw WebSocket frames, gRPC messages, the admin API the load test drives) from node:http, node:http2,
 * socket.io and grpc-js directly, with no Nest. Used by the overhead scenario, and by the
 * load test's own tests as a stand-in service.
 */
const log = new OrderLog();
const PROTO_STATUS: Record<string, number> = {
  created: 1,
  paid: 2,
  packed: 3,
  shipped: 4,
  out_for_delivery: 5,
};

type Req = IncomingMessage | Http2ServerRequest;
/** What both node:http and node:http2 compat responses offer (their union is not callable). */
interface Res {
  writeHead(status: number, headers?: Record<string, string | number>): unknown;
  write(chunk: string): boolean;
  end(chunk?: string): unknown;
}

function json(res: Res, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

async function readBody(req: Req): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

const frame = (e: BareEvent): string =>
  `id: ${e.seq}\nevent: ${nameOf(e)}\ndata: ${JSON.stringify(e)}\n\n`;

function sse(req: Req, res: Res, orderId: string, after: number): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-store',
    'x-accel-buffering': 'no',
  });
  res.write('retry: 2000\n\n');
  for (const e of log.after(orderId, after)) res.write(frame(e));
  const off = log.listen(orderId, (e) => res.write(frame(e)));
  req.on('close', off);
}

function longPoll(req: Req, res: Res, orderId: string, after: number, waitS: number): void {
  const cancel = holdPoll(log, orderId, after, waitS, (events) => {
    if (events !== undefined) return json(res, 200, pollBody(orderId, after, events));
    res.writeHead(204);
    res.end();
  });
  req.on('close', cancel);
}

async function handle(req: Req, res: Res): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://x');
  const p = url.pathname;
  const snapshotOf = SNAPSHOT_ROUTE.exec(p);
  if (snapshotOf) {
    const body = orderBody(log, decodeURIComponent(snapshotOf[1]));
    return body ? json(res, 200, body) : json(res, 404, { code: 'not_found' });
  }
  const m = /^\/v1\/orders\/([^/]+)(\/stream|\/events)$/.exec(p);
  if (m) {
    const orderId = decodeURIComponent(m[1]);
    const order = log.get(orderId);
    if (!order) return json(res, 404, { code: 'not_found' });
    const lastEventId = req.headers['last-event-id'];
    const after = Number(
      url.searchParams.get('after') ?? (typeof lastEventId === 'string' ? lastEventId : 0),
    );
    if (m[2] === '/stream') return sse(req, res, orderId, after);
    return longPoll(req, res, orderId, after, Number(url.searchParams.get('wait') ?? 30));
  }
  const admin = adminAnswer(
    log,
    req.method ?? 'GET',
    p,
    req.method === 'PUT' ? await readBody(req) : {},
  );
  if (admin !== undefined) return json(res, 200, admin);
  if (p === '/metrics') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    return void res.end(metricsText());
  }
  json(res, 404, { code: 'not_found' });
}

/** Each event's raw WebSocket frame, made once for every socket (as ws's broadcast example). */
const wsFrames = new WeakMap<BareEvent, Buffer>();
const wsFrame = (e: BareEvent): Buffer => {
  let frame = wsFrames.get(e);
  if (frame === undefined) {
    frame = Buffer.from(`{"type":"${nameOf(e)}","data":${JSON.stringify(e)}}`);
    wsFrames.set(e, frame);
  }
  return frame;
};
const TEXT = { binary: false } as const;

/**
 * The raw WebSocket route (`/v1/orders/:id/ws?after=`) as a bare `ws` broadcaster: the
 * service's frames (`open`, then `{type, data}` per event), no auth, no back-pressure.
 */
function websocketStream(ws: WebSocket, orderId: string, after: number): void {
  ws.on('error', () => undefined);
  ws.send(JSON.stringify({ type: 'open', data: { orderId, afterSeq: after } }));
  for (const e of log.after(orderId, after)) ws.send(wsFrame(e), TEXT);
  const off = log.listen(orderId, (e) => ws.send(wsFrame(e), TEXT));
  ws.once('close', off);
}

function serveWebSocket(server: ReturnType<typeof createServer>): void {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  // Beside socket.io's engine: only this route is answered here (engine.io takes its own).
  server.on('upgrade', (req: IncomingMessage, socket, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const m = /^\/v1\/orders\/([^/]+)\/ws$/.exec(url.pathname);
    if (!m) return;
    const orderId = decodeURIComponent(m[1]);
    wss.handleUpgrade(req, socket, head, (ws) => {
      if (!log.get(orderId)) return ws.close(4404, 'not_found');
      websocketStream(ws, orderId, Number(url.searchParams.get('after') ?? 0));
    });
  });
}

type ServerResponseLike = Res;

function onRequest(req: Req, res: ServerResponseLike): void {
  handle(req, res).catch(() => json(res, 400, { code: 'bad_request' }));
}

function grpcServer(): grpc.Server {
  const def = protoLoader.loadSync(ORDER_STATUS_PROTO_PATH, PROTO_LOADER_OPTIONS);
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    orderstatus: { v1: { OrderStatusService: { service: grpc.ServiceDefinition } } };
  };
  const toProto = (e: BareEvent): object => {
    if (isPayload(e)) {
      const { orderId, seq, publishedAtUs, payload } = e;
      return { payload: { orderId, seq, publishedAtUs, payload: Buffer.from(payload) } };
    }
    const common = {
      orderId: e.orderId,
      seq: e.seq,
      status: PROTO_STATUS[e.status] ?? 0,
      publishedAtUs: e.publishedAtUs,
    };
    if (isTracking(e)) return { tracking: { ...common, location: e.location, etaMs: e.etaMs } };
    const previous = e.previousStatus;
    return {
      event: { ...common, previousStatus: previous ? PROTO_STATUS[previous] : 0 },
    };
  };
  const server = new grpc.Server();
  server.addService(pkg.orderstatus.v1.OrderStatusService.service, {
    Subscribe: (call: grpc.ServerWritableStream<{ orderId: string; afterSeq: number }, object>) => {
      const { orderId, afterSeq } = call.request;
      if (!log.get(orderId)) {
        call.destroy(Object.assign(new Error('not found'), { code: grpc.status.NOT_FOUND }));
        return;
      }
      call.sendMetadata(new grpc.Metadata());
      const write = (e: BareEvent): boolean => call.write(toProto(e));
      for (const e of log.after(orderId, Number(afterSeq))) write(e);
      const off = log.listen(orderId, write);
      call.on('cancelled', off);
      call.on('close', off);
    },
    GetOrder: (
      call: grpc.ServerUnaryCall<{ orderId: string }, object>,
      cb: grpc.sendUnaryData<object>,
    ) => {
      const order = log.get(call.request.orderId);
      if (!order) return cb({ code: grpc.status.NOT_FOUND, details: 'not found' });
      const last = order.events[order.events.length - 1];
      cb(null, {
        orderId: call.request.orderId,
        status: PROTO_STATUS[statusOf(last) ?? ''] ?? 0,
        lastSeq: order.lastSeq,
        updatedAtUs: last.publishedAtUs,
      });
    },
    UpdateStatus: (_call: unknown, cb: grpc.sendUnaryData<object>) =>
      cb({ code: grpc.status.UNIMPLEMENTED }),
  });
  return server;
}

async function main(): Promise<void> {
  const host = process.env.HOST ?? '127.0.0.1';
  const http1 = createServer({ keepAliveTimeout: 60_000 }, (req, res) =>
    onRequest(req, res as unknown as Res),
  );
  const io = new IoServer(http1, { transports: ['websocket'], serveClient: false });
  serveWebSocket(http1);
  io.of('/orders').on('connection', (socket) => {
    const offs = new Map<string, () => void>();
    socket.on(
      'subscribe',
      (msg: { orderId: string; afterSeq: number }, ack?: (r: object) => void) => {
        if (!log.get(msg.orderId))
          return ack?.({ ok: false, error: { code: 'not_found', message: 'not found' } });
        ack?.({ ok: true, orderId: msg.orderId, lastSeq: log.get(msg.orderId)?.lastSeq });
        for (const e of log.after(msg.orderId, msg.afterSeq)) socket.emit(nameOf(e), e);
        offs.set(
          msg.orderId,
          log.listen(msg.orderId, (e) => socket.emit(nameOf(e), e)),
        );
      },
    );
    socket.on('disconnect', () => offs.forEach((off) => off()));
  });
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], { keySize: 2048 });
  const h2 = createSecureServer(
    // TCP_NODELAY as the service sets it (Node's HTTP/2 secure server does not by default).
    { key: pems.private, cert: pems.cert, allowHTTP1: true, noDelay: true },
    (req, res) => onRequest(req, res as unknown as Res),
  );
  const listen = (
    s: { listen: (port: number, host: string, cb: () => void) => unknown; address: () => unknown },
    port: string | undefined,
  ): Promise<number> =>
    new Promise((resolve) =>
      s.listen(Number(port ?? 0), host, () => resolve((s.address() as AddressInfo).port)),
    );
  const http = await listen(http1, process.env.HTTP_PORT);
  const https = await listen(h2, process.env.HTTPS_PORT);
  const g = grpcServer();
  const grpcPort = await new Promise<number>((resolve, reject) =>
    g.bindAsync(
      `${host}:${process.env.GRPC_PORT ?? 0}`,
      grpc.ServerCredentials.createInsecure(),
      (err, port) => (err ? reject(err) : resolve(port)),
    ),
  );
  process.stdout.write(
    `${JSON.stringify({ event: 'listening', http, https, grpc: grpcPort, pid: process.pid })}\n`,
  );
  const shutdown = (): void => {
    log.stop();
    g.forceShutdown();
    void io.close();
    h2.close();
    process.exit(0);
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

void main();
