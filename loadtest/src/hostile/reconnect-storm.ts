import { connect as h2connect } from 'node:http2';
import { bearer, rawSocket, Tally, type Attack, type AttackTarget } from './attack';
import { grpcHeaders, subscribeMessage } from '../clients/grpc-frame';
import { joinRawSocketIo, subscribeFrame } from './raw-socketio';

/** A cycle that has not seen its first answer by then is abandoned (and counted). */
const CYCLE_TIMEOUT_MS = 3_000;
const TICK_MS = 100;

type Cycle = (t: AttackTarget, tally: Tally) => Promise<void>;

/**
 * Send `request` on a raw connection, wait for the first bytes of the answer (the stream's
 * head, or a WebSocket's 101), disconnect.
 */
const rawCycle =
  (request: (t: AttackTarget) => string): Cycle =>
  (t, tally) =>
    new Promise((resolve) => {
      const s = rawSocket(t, false, (code) => tally.add(`error_${code}`));
      const end = () => {
        clearTimeout(timer);
        s.destroy();
        resolve();
      };
      const timer = setTimeout(() => (tally.add('timeout'), end()), CYCLE_TIMEOUT_MS);
      s.write(request(t));
      s.once('data', end);
      s.once('close', end);
    });

const ordersPath = (t: AttackTarget, suffix: string): string =>
  `GET /v1/orders/${encodeURIComponent(t.orderId)}/${suffix} HTTP/1.1\r\nHost: ${t.service.host}\r\n`;

const sseCycle = rawCycle(
  (t) => `${ordersPath(t, 'stream')}${bearer(t.token)}accept: text/event-stream\r\n\r\n`,
);

/** The raw WebSocket route's upgrade. */
const websocketCycle = rawCycle(
  (t) =>
    `${ordersPath(t, 'ws')}Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n` +
    `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n${bearer(t.token)}\r\n`,
);

const wsCycle: Cycle = async (t, tally) => {
  const s = await joinRawSocketIo(t, (code) => tally.add(`error_${code}`));
  if (s === undefined) return tally.add('ws_join_failed');
  s.write(subscribeFrame(t.orderId));
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, CYCLE_TIMEOUT_MS);
    s.once('data', () => (clearTimeout(timer), resolve()));
  });
  s.destroy();
};

const grpcCycle: Cycle = (t, tally) =>
  new Promise((resolve) => {
    const session = h2connect(`http://${t.service.host}:${t.service.grpcPort}`);
    session.on('error', (err: NodeJS.ErrnoException) => tally.add(`error_${err.code ?? 'error'}`));
    const end = () => {
      clearTimeout(timer);
      session.destroy();
      resolve();
    };
    const timer = setTimeout(() => (tally.add('timeout'), end()), CYCLE_TIMEOUT_MS);
    const req = session.request(grpcHeaders(t.token), { endStream: false });
    req.on('error', () => undefined);
    req.end(subscribeMessage(t.orderId));
    req.once('data', end);
    req.once('close', end);
  });

const CYCLES: readonly [string, Cycle][] = [
  ['sse', sseCycle],
  ['ws', wsCycle],
  ['websocket', websocketCycle],
  ['grpc', grpcCycle],
];

/**
 * A reconnect storm: clients that subscribe and drop again at once, `perSec` cycles a
 * second over SSE, socket.io, the raw WebSocket and gRPC in turn, at most `maxCycles` in all. Each cycle
 * takes and gives back a slot and a bus subscription; none may be left behind.
 */
export function reconnectStorm(t: AttackTarget, perSec: number, maxCycles: number): Attack {
  const tally = new Tally();
  const inFlight = new Set<Promise<void>>();
  let timer: NodeJS.Timeout | undefined;
  let started = 0;
  const perTick = Math.max(1, Math.round((perSec * TICK_MS) / 1000));

  return {
    name: 'reconnect-storm',
    start() {
      timer = setInterval(() => {
        // Bounded: never more than a second's worth in flight, never more than maxCycles.
        for (let i = 0; i < perTick && started < maxCycles && inFlight.size < perSec; i++) {
          const [name, cycle] = CYCLES[started++ % CYCLES.length];
          const p = cycle(t, tally).then(() => {
            tally.add(`cycles_${name}`);
            inFlight.delete(p);
          });
          inFlight.add(p);
        }
        tally.add('elapsedTicks');
        if (started >= maxCycles) clearInterval(timer);
      }, TICK_MS);
    },
    async stop() {
      clearInterval(timer);
      await Promise.all(inFlight);
      const seconds = tally.get('elapsedTicks') * (TICK_MS / 1000);
      const cycles = CYCLES.reduce((a, [n]) => a + tally.get(`cycles_${n}`), 0);
      const out = tally.toJSON('storm_');
      delete out.storm_elapsedTicks;
      return {
        ...out,
        storm_cycles: cycles,
        storm_cyclesPerSec: seconds > 0 ? Math.round(cycles / seconds) : 0,
      };
    },
  };
}
