import { Server } from 'socket.io';
import { Encoder, PacketType } from 'socket.io-parser';
import { SkipReason } from '@app/contracts';
import {
  JOB_DOMAIN,
  JobPhase,
  jobItem,
  type JobItem,
  type PhaseChanged,
  type ProgressReported,
} from '@app/event-bus/testing/fixture-domain';
import type { OrdersSocket } from './orders-ws.events';
import { SocketPackets, socketPackets } from './socket-packets';

const step: PhaseChanged = {
  orderId: 'o-ü',
  seq: 7,
  phase: JobPhase.Building,
  previousPhase: JobPhase.Queued,
  publishedAtUs: 1_764_470_000_000_001,
};
const progress: ProgressReported = {
  orderId: 'o-1',
  seq: 8,
  phase: JobPhase.Testing,
  publishedAtUs: 1_764_470_000_000_002,
  percent: 62.5,
};

interface Written {
  readonly packets: unknown;
  readonly opts: Record<string, unknown>;
}

/** A socket of a real socket.io namespace whose client records what it is asked to write. */
function fakeSocket(io: Server, written: Written[]): OrdersSocket {
  const nsp = io.of('/orders');
  return {
    nsp,
    client: {
      _packet: (packets: unknown, opts: Record<string, unknown>) => written.push({ packets, opts }),
    },
  } as unknown as OrdersSocket;
}

describe('SocketPackets', () => {
  // Never attached to an HTTP server: no engine, nothing to close.
  const io = new Server();

  // The event names are the kinds' wire names: a `step` item travels as `phase`.
  it.each([
    ['phase', jobItem(step)],
    ['progress', jobItem(progress)],
  ] as const)(
    'a %s item: the packet socket.emit would encode, and its WebSocket frame',
    (name, item: JobItem) => {
      const written: Written[] = [];
      const socket = fakeSocket(io, written);
      expect(socketPackets(socket, JOB_DOMAIN)?.write(socket, item)).toBe(true);
      const payload =
        item.kind === 'progress' ? item.progress : item.kind === 'step' ? item.step : undefined;
      const expected = new Encoder().encode({
        type: PacketType.EVENT,
        nsp: '/orders',
        data: [name, payload],
      });
      expect(written[0].packets).toEqual(expected);
      expect(written[0].opts.preEncoded).toBe(true);
      // engine.io writes this frame as is: the engine.io message `4` + the packet, unmasked.
      const frame = Buffer.concat(written[0].opts.wsPreEncodedFrame as Buffer[]);
      const data = Buffer.from(`4${expected[0] as string}`);
      expect(frame.subarray(frame.length - data.length).equals(data)).toBe(true);
    },
  );

  it('encodes one event once for every socket that writes it', () => {
    const written: Written[] = [];
    const socket = fakeSocket(io, written);
    const packets = socketPackets(socket, JOB_DOMAIN) as SocketPackets;
    const before = packets.encodings;
    const e = { ...step, seq: 9 };
    for (let i = 0; i < 1000; i++) packets.write(socket, jobItem(e));
    expect(packets.encodings - before).toBe(1);
    expect(new Set(written.map((w) => w.packets)).size).toBe(1);
  });

  it('leaves resets and skipped ranges to the caller (per subscriber)', () => {
    const written: Written[] = [];
    const socket = fakeSocket(io, written);
    const skipped: JobItem = {
      kind: 'skipped',
      skipped: { fromSeq: 1, toSeq: 2, reason: SkipReason.Overflow },
    };
    expect(socketPackets(socket, JOB_DOMAIN)?.write(socket, skipped)).toBe(false);
    expect(written).toHaveLength(0);
  });

  it('says it cannot encode once when the adapter has no broadcast encoder', () => {
    const socket = {
      nsp: { name: '/orders', adapter: {} },
      client: { _packet: () => undefined },
    } as unknown as OrdersSocket;
    expect(socketPackets(socket, JOB_DOMAIN)).toBeUndefined();
  });
});
