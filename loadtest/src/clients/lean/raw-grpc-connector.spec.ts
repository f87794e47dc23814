import { createServer, type AddressInfo, type Socket } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import * as hpack from 'hpack.js';
import { OrderStatus } from '@app/order-domain/order-status';
import { streamItemToProto } from '@app/order-domain/proto-codec';
import { orderStatusClientCtor } from '../grpc-connector';
import { framedMessage } from '../grpc-frame';
import type { StreamHandlers } from '../transport';
import { Flag, frame, FrameSplitter, FrameType, unpadded, type Frame } from './h2-frames';
import { RawGrpcConnector } from './raw-grpc-connector';

/**
 * What only the raw gRPC client has to get right because it speaks HTTP/2 itself: the
 * server's keepalive PINGs answered, flow-control window given back, and frames a
 * grpc-js server never sends (padding, a header block split over CONTINUATION frames).
 * What it reports for each way a call ends is compared with grpc-js's client in
 * lean-grpc-connector.spec.ts.
 */
function eventOf(seq: number, padding = 0) {
  return {
    orderId: 'r-1',
    seq,
    status: OrderStatus.Paid,
    publishedAtUs: 1_764_470_000_000_000 + seq,
    padding: 'x'.repeat(padding),
  };
}

/** A SubscribeResponse carrying event `seq`, serialized as the service sends it. */
const eventMsg = (seq: number, padding = 0): Buffer =>
  Buffer.from(
    orderStatusClientCtor().service.Subscribe.responseSerialize(
      streamItemToProto({ kind: 'event', event: eventOf(seq, padding) }),
    ),
  );

/** A DATA or HEADERS frame's content with `pad` bytes of padding (the frame needs Flag.Padded). */
const padded = (body: Buffer, pad: number): Buffer =>
  Buffer.concat([Buffer.from([pad]), body, Buffer.alloc(pad)]);

/** Follows one call and resolves with its seqs and how it ended. */
function follow(
  connector: RawGrpcConnector,
  orderId: string,
): Promise<{ seqs: number[]; end: string }> {
  return new Promise((resolve) => {
    const seqs: number[] = [];
    const handlers: StreamHandlers = {
      onOpen: () => undefined,
      onEvent: (e) => seqs.push(e.seq),
      onReset: () => undefined,
      onSkipped: () => undefined,
      onEnd: (reason) => resolve({ seqs, end: `end ${reason}` }),
      onError: (code) => resolve({ seqs, end: `error ${code}` }),
    };
    connector.open(orderId, 0, handlers);
  });
}

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);

describe('RawGrpcConnector against grpc-js', () => {
  type Call = grpc.ServerWritableStream<{ orderId: string }, unknown>;
  let server: grpc.Server;
  let address = '';

  beforeAll(async () => {
    // Keepalive as tight as grpc-js allows to be tested: a PING every 50 ms, the
    // connection dropped when one is not answered within 200 ms.
    server = new grpc.Server({ 'grpc.keepalive_time_ms': 50, 'grpc.keepalive_timeout_ms': 200 });
    server.addService(orderStatusClientCtor().service, {
      Subscribe: (call: Call) => {
        if (call.request.orderId === 'slow') {
          // 10 events over ~1 s, during which the server pings ~20 times.
          let seq = 0;
          const timer = setInterval(() => {
            call.write(streamItemToProto({ kind: 'event', event: eventOf(++seq) }));
            if (seq === 10) {
              clearInterval(timer);
              call.end();
            }
          }, 100);
          call.on('cancelled', () => clearInterval(timer));
        } else {
          // 300 events of ~1 KB: 300 KB, past any window the client starts with.
          for (const seq of range(300)) {
            call.write(streamItemToProto({ kind: 'event', event: eventOf(seq, 1_000) }));
          }
          call.end();
        }
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

  it('answers the keepalive PINGs of a call that lasts a second', async () => {
    const raw = new RawGrpcConnector(address, undefined);
    try {
      await expect(follow(raw, 'slow')).resolves.toEqual({
        seqs: range(10),
        end: 'end completed',
      });
    } finally {
      await raw.close();
    }
  });

  it('gives back flow-control window as it reads (300 KB through a 64 KB window)', async () => {
    const raw = new RawGrpcConnector(address, undefined, { windowBytes: 65_535 });
    try {
      await expect(follow(raw, 'bulk')).resolves.toEqual({
        seqs: range(300),
        end: 'end completed',
      });
    } finally {
      await raw.close();
    }
  });

  it('refuses a window HTTP/2 cannot carry', () => {
    expect(() => new RawGrpcConnector(address, undefined, { windowBytes: 2 ** 31 })).toThrow(
      RangeError,
    );
  });
});

describe('RawGrpcConnector against frames a grpc-js server does not send', () => {
  /** Follows one call on a TCP server that writes `frames` once the request has arrived. */
  async function followFramed(frames: Buffer[]): Promise<{ seqs: number[]; end: string }> {
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      let seen = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        seen = Buffer.concat([seen, chunk]);
        // The request's DATA frame ends the stream: answer after it (preface skipped).
        const splitter = new FrameSplitter((f: Frame) => {
          if (f.type === FrameType.Data && f.flags & Flag.EndStream)
            socket.write(Buffer.concat(frames));
        });
        splitter.push(seen.subarray(24));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const raw = new RawGrpcConnector(
      `127.0.0.1:${(server.address() as AddressInfo).port}`,
      undefined,
    );
    try {
      return await follow(raw, 'x');
    } finally {
      await raw.close();
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  }

  const block = (
    fields: Record<string, string>,
    comp = hpack.compressor.create({ table: { size: 4_096 } }),
  ): Buffer => {
    comp.write(Object.entries(fields).map(([name, value]) => ({ name, value })));
    return comp.read() ?? Buffer.alloc(0);
  };
  it('reads padded DATA and HEADERS, a header block over CONTINUATION frames, and indexed trailers', async () => {
    // One compressor for the connection, as a server has: the trailers may then refer to
    // entries the response headers added to the dynamic table.
    const comp = hpack.compressor.create({ table: { size: 4_096 } });
    const head = block({ ':status': '200', 'content-type': 'application/grpc' }, comp);
    const messages = Buffer.concat([framedMessage(eventMsg(1)), framedMessage(eventMsg(2, 40))]);
    const trailers = block({ 'grpc-status': '0', 'content-type': 'application/grpc' }, comp);
    const followed = followFramed([
      frame(FrameType.Settings, 0, 0),
      frame(FrameType.Headers, Flag.Padded, 1, padded(head.subarray(0, 3), 7)),
      frame(FrameType.Continuation, 0, 1, head.subarray(3, 5)),
      frame(FrameType.Continuation, Flag.EndHeaders, 1, head.subarray(5)),
      // A message split across two DATA frames, the first padded.
      frame(FrameType.Data, Flag.Padded, 1, padded(messages.subarray(0, 20), 3)),
      frame(FrameType.Data, 0, 1, messages.subarray(20)),
      frame(FrameType.Headers, Flag.EndHeaders | Flag.EndStream, 1, trailers),
    ]);
    await expect(followed).resolves.toEqual({ seqs: [1, 2], end: 'end completed' });
  });

  it('fails the call on a frame larger than it allows, on padding longer than the frame, and on a stream ended without status', async () => {
    const head = block({ ':status': '200', 'content-type': 'application/grpc' });
    const cases: Buffer[][] = [
      [frame(FrameType.Data, 0, 1, Buffer.alloc(20_000))],
      [
        frame(FrameType.Headers, Flag.EndHeaders, 1, head),
        frame(FrameType.Data, Flag.Padded, 1, Buffer.from([9, 0, 0])),
      ],
      [
        frame(FrameType.Headers, Flag.EndHeaders, 1, head),
        frame(FrameType.Data, Flag.EndStream, 1, framedMessage(eventMsg(1))),
      ],
    ];
    for (const frames of cases) {
      expect((await followFramed(frames)).end).toBe('error grpc_INTERNAL');
    }
  });
});

describe('FrameSplitter and unpadded', () => {
  it('splits frames whatever the chunking', () => {
    const frames = [
      frame(FrameType.Settings, 0, 0),
      frame(FrameType.Data, Flag.Padded, 3, padded(Buffer.from('hello'), 2)),
      frame(FrameType.Ping, 0, 0, Buffer.alloc(8, 7)),
    ];
    const wire = Buffer.concat(frames);
    for (let at = 0; at <= wire.length; at += 1) {
      const seen: string[] = [];
      const splitter = new FrameSplitter((f) =>
        seen.push(
          `${f.type}/${f.flags}/${f.streamId}/${(unpadded(f) ?? f.payload).toString('hex')}`,
        ),
      );
      expect(splitter.push(wire.subarray(0, at))).toBe(true);
      expect(splitter.push(wire.subarray(at))).toBe(true);
      expect(seen).toEqual([
        '4/0/0/',
        `0/8/3/${Buffer.from('hello').toString('hex')}`,
        `6/0/0/${'07'.repeat(8)}`,
      ]);
    }
  });
});
