import * as http2 from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { StreamEndTrailer } from '@app/contracts/grpc-trailers';
import { SkipReason } from '@app/contracts/stream-envelope';
import { type StreamItem } from '@app/order-domain/order-events';
import { OrderStatus } from '@app/order-domain/order-status';
import { streamItemToProto } from '@app/order-domain/proto-codec';
import { GrpcConnector, orderStatusClientCtor } from '../grpc-connector';
import type { Connector, StreamHandlers } from '../transport';
import { LeanGrpcConnector, MessageDecoder } from './lean-grpc-connector';
import { RawGrpcConnector } from './raw-grpc-connector';

/**
 * The clients below grpc-js (the lean one on `node:http2`, the raw one on a TCP socket)
 * against a real grpc-js server, beside grpc-js's
 * own client (GrpcConnector): for every way a Subscribe call goes, they report the same
 * calls to their handlers, so a scale run's unsampled subscribers count what the sampled
 * ones would have.
 */
type Lean = (address: string, token?: string) => Connector;
const CLIENTS: [string, Lean][] = [
  ['LeanGrpcConnector', (address, token) => new LeanGrpcConnector(address, token)],
  ['RawGrpcConnector', (address, token) => new RawGrpcConnector(address, token)],
];

const event = (seq: number): StreamItem => ({
  kind: 'event',
  event: {
    orderId: 'lg-1',
    seq,
    status: OrderStatus.Paid,
    publishedAtUs: 1_764_470_000_000_000 + seq,
    // Events of different sizes (a long reason is as good a filler as any string).
    reason: 'x'.repeat(seq * 50),
  },
});
const skipped: StreamItem = {
  kind: 'skipped',
  skipped: { fromSeq: 4, toSeq: 6, reason: SkipReason.Overflow },
};

type Call = grpc.ServerWritableStream<{ orderId: string; afterSeq: number }, unknown>;

/** What the server does, by the order id the client asks for. */
const scripts: Record<string, (call: Call) => void> = {
  // Messages, then OK: the order completed.
  completes: (call) => {
    for (const item of [event(1), event(2), event(3), skipped, event(7)]) {
      call.write(streamItemToProto(item));
    }
    call.end();
  },
  // The service's own end (max age): UNAVAILABLE naming its reason in the trailers.
  'max-age': (call) => {
    call.write(streamItemToProto(event(1)));
    const md = new grpc.Metadata();
    md.set(StreamEndTrailer.Reason, 'max_age');
    call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'max age', metadata: md });
  },
  // Refused before any message: a trailers-only response.
  denied: (call) =>
    call.emit('error', { code: grpc.status.PERMISSION_DENIED, details: 'not yours' }),
  // Echoes the caller's token back as the one event's order id; then holds.
  whoami: (call) => {
    const [auth] = call.metadata.get('authorization');
    const item = event(1);
    if (item.kind === 'event')
      call.write(streamItemToProto({ ...item, event: { ...item.event, orderId: String(auth) } }));
  },
};

/** Runs one Subscribe on `connector` and resolves with what its handlers saw. */
function follow(connector: Connector, orderId: string, untilEvents = Infinity): Promise<string[]> {
  return new Promise<string[]>((resolve) => {
    const seen: string[] = [];
    let events = 0;
    const handlers: StreamHandlers = {
      onOpen: () => seen.push('open'),
      onEvent: (e) => {
        seen.push(`event ${e.orderId} ${e.seq} ${e.publishedAtUs}`);
        if (++events >= untilEvents) {
          stream.close();
          resolve(seen);
        }
      },
      onReset: (r) => seen.push(`reset ${r.reason} ${r.lastSeq}`),
      onSkipped: (s) => seen.push(`skipped ${s.fromSeq}..${s.toSeq}`),
      onEnd: (reason) => resolve([...seen, `end ${reason}`]),
      onError: (code) => resolve([...seen, `error ${code}`]),
    };
    const stream = connector.open(orderId, 5, handlers);
  });
}

describe.each(CLIENTS)('%s', (_name, leanClient) => {
  let server: grpc.Server;
  let address = '';
  const cancelled: string[] = [];
  const requests: { orderId: string; afterSeq: number }[] = [];

  beforeAll(async () => {
    server = new grpc.Server();
    server.addService(orderStatusClientCtor().service, {
      Subscribe: (call: Call) => {
        requests.push({ orderId: call.request.orderId, afterSeq: Number(call.request.afterSeq) });
        call.on('cancelled', () => cancelled.push(call.request.orderId));
        scripts[call.request.orderId]?.(call);
      },
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    address = `127.0.0.1:${port}`;
  });
  afterAll(() => server.forceShutdown());

  it.each(['completes', 'max-age', 'denied'])(
    'reports what grpc-js reports when the call %s',
    async (orderId) => {
      const lean = leanClient(address);
      const reference = new GrpcConnector(address, undefined, false);
      try {
        const [a, b] = [await follow(lean, orderId), await follow(reference, orderId)];
        expect(a).toEqual(b);
        // The script ran to its end (not an early error on both sides).
        expect(a.at(-1)).toBe(
          {
            completes: 'end completed',
            'max-age': 'end max_age',
            denied: 'error grpc_PERMISSION_DENIED',
          }[orderId],
        );
        expect(requests.filter((r) => r.orderId === orderId).at(-1)).toEqual({
          orderId,
          afterSeq: 5,
        });
      } finally {
        await lean.close();
        await reference.close();
      }
    },
  );

  it('sends the bearer token as grpc-js sends metadata, and close() cancels the call', async () => {
    // Twice on one connector: the lean client's second call shares the first's session.
    const lean = leanClient(address, 'tok-123');
    try {
      for (let round = 0; round < 2; round++) {
        expect(await follow(lean, 'whoami', 1)).toEqual([
          'open',
          `event Bearer tok-123 1 ${1_764_470_000_000_001}`,
        ]);
        const before = cancelled.length;
        await waitUntil(() => cancelled.length > before);
        expect(cancelled.at(-1)).toBe('whoami');
      }
    } finally {
      await lean.close();
    }
  });

  it('reports a server that is not there as UNAVAILABLE, as grpc-js does', async () => {
    const probe = new grpc.Server();
    const port = await new Promise<number>((resolve, reject) =>
      probe.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    probe.forceShutdown(); // a free port nobody listens on
    const lean = leanClient(`127.0.0.1:${port}`);
    try {
      expect(await follow(lean, 'completes')).toEqual(['error grpc_UNAVAILABLE']);
    } finally {
      await lean.close();
    }
  });
});

/**
 * A raw HTTP/2 server that answers every call one way, to see both clients read what a
 * grpc-js server never sends (a message that does not decode, a bare HTTP error, a reset
 * stream, a dropped connection).
 */
async function rawServer(
  answer: (stream: http2.ServerHttp2Stream, drop: () => void) => void,
): Promise<{ address: string; close: () => Promise<void> }> {
  const server = http2.createServer();
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => sockets.add(s));
  server.on('stream', (stream: http2.ServerHttp2Stream) => {
    stream.on('error', () => undefined);
    // The request body is read first, as a server would before answering.
    stream.resume();
    stream.once('end', () =>
      answer(stream, () => {
        for (const s of sockets) s.destroy();
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe.each(CLIENTS)('%s on answers a grpc-js server does not give', (_name, leanClient) => {
  const grpcHead = { ':status': 200, 'content-type': 'application/grpc' };
  const cases: [string, (stream: http2.ServerHttp2Stream, drop: () => void) => void, string][] = [
    [
      'a message that does not decode',
      (stream) => {
        stream.respond(grpcHead);
        // The event arm (field 1, length-delimited) with a length past the message's end.
        stream.write(Buffer.from([0, 0, 0, 0, 2, 0x0a, 0x7f]));
      },
      'error grpc_INTERNAL',
    ],
    [
      'an HTTP 503 without gRPC status',
      (stream) => {
        stream.respond({ ':status': 503 });
        stream.end();
      },
      'error grpc_UNAVAILABLE',
    ],
    [
      'a stream refused by reset',
      (stream) => stream.close(http2.constants.NGHTTP2_REFUSED_STREAM),
      'error grpc_UNAVAILABLE',
    ],
    [
      'the connection dropped mid-call',
      (stream, drop) => {
        stream.respond(grpcHead);
        stream.write(Buffer.from([0, 0, 0, 0, 0]), drop);
      },
      'error grpc_UNAVAILABLE',
    ],
  ];

  it.each(cases)('reports what grpc-js reports on %s', async (_name, answer, expected) => {
    const raw = await rawServer(answer);
    const lean = leanClient(raw.address);
    const reference = new GrpcConnector(raw.address, undefined, false);
    try {
      const [a, b] = [await follow(lean, 'o-1'), await follow(reference, 'o-1')];
      expect(a).toEqual(b);
      expect(a.at(-1)).toBe(expected);
    } finally {
      await lean.close();
      await reference.close();
      await raw.close();
    }
  });
});

describe('MessageDecoder', () => {
  const frame = (payload: Buffer, compressed = 0): Buffer => {
    const head = Buffer.alloc(5);
    head[0] = compressed;
    head.writeUInt32BE(payload.length, 1);
    return Buffer.concat([head, payload]);
  };
  const payloads = [Buffer.from('a'), Buffer.alloc(0), Buffer.from('0123456789'.repeat(30))];
  const body = Buffer.concat(payloads.map((p) => frame(p)));

  it('yields every message whatever the chunking (every split point, and one byte at a time)', () => {
    const splits: Buffer[][] = [];
    for (let at = 0; at <= body.length; at += 1)
      splits.push([body.subarray(0, at), body.subarray(at)]);
    splits.push([...body].map((b) => Buffer.from([b])));
    for (const chunks of splits) {
      const out: string[] = [];
      const decoder = new MessageDecoder((m) => out.push(m.toString()));
      for (const c of chunks) expect(decoder.push(c)).toBe(true);
      expect(out).toEqual(payloads.map((p) => p.toString()));
    }
  });

  it('refuses a compressed message (the client asks for none)', () => {
    const decoder = new MessageDecoder(() => undefined);
    expect(decoder.push(frame(Buffer.from('z'), 1))).toBe(false);
  });
});

async function waitUntil(ok: () => boolean, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}
