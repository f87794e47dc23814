import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import Fastify, { type FastifyInstance } from 'fastify';
import { PinoLogger, type Params } from 'nestjs-pino';
import { request } from 'undici';
import { ConnectionLog } from './connection-log';
import { OpsConnectionObserver } from './ops-connection-observer';
import { ConnectionLogGuard } from '../connections/connection-log.guard';
import { jsonLineSink } from './testing/json-lines';

interface Line {
  msg?: string;
  transport?: string;
  orderId?: string;
  durationMs?: number;
}

// nestjs-pino's root logger is built once per process: one sink for every test below.
const { lines, sink } = jsonLineSink<Line>();
const params: Params = { pinoHttp: [{ level: 'info' }, sink] };

/**
 * ConnectionLogGuard on a real Fastify server (port 0), on the long-poll route: the
 * opened and closed lines at `info`, and at a level that writes neither, nothing built
 * for them, not even a listener on the response (a poll is a held connection many times
 * a second).
 */
describe('ConnectionLogGuard', () => {
  let app: FastifyInstance;
  let base: string;
  let guard: ConnectionLogGuard;
  /** `close` listeners the guard added to the last response. */
  let added = -1;

  beforeAll(async () => {
    const logger = new PinoLogger(params);
    guard = new ConnectionLogGuard(new OpsConnectionObserver(new ConnectionLog(logger), () => {}));
    app = Fastify();
    app.get('/v1/orders/:orderId/events', (req, reply) => {
      const before = reply.raw.listenerCount('close');
      expect(guard.canActivate(new ExecutionContextHost([req, reply]))).toBe(true);
      added = reply.raw.listenerCount('close') - before;
      void reply.send({ events: [] });
    });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });

  afterAll(async () => {
    PinoLogger.root.level = 'info';
    await app.close();
  });

  beforeEach(() => {
    lines.length = 0;
    added = -1;
  });

  const poll = async () => {
    const res = await request(`${base}/v1/orders/o-1/events`);
    await res.body.text();
    expect(res.statusCode).toBe(200);
    // The closed line is written on the response's close, right after the body.
    await new Promise((resolve) => setImmediate(resolve));
  };

  it('logs an opened and a closed line per held request at info', async () => {
    PinoLogger.root.level = 'info';
    await poll();
    expect(added).toBe(1);
    expect(lines.map((l) => l.msg)).toEqual(['connection opened', 'connection closed']);
    expect(lines[0]).toMatchObject({ transport: 'long-poll', orderId: 'o-1' });
    expect(typeof lines[1].durationMs).toBe('number');
  });

  it('builds nothing for the lines when info is not written', async () => {
    PinoLogger.root.level = 'warn';
    const info = jest.spyOn(PinoLogger.prototype, 'info');
    try {
      await poll();
      expect(added).toBe(0);
      expect(info).not.toHaveBeenCalled();
      expect(lines).toEqual([]);
    } finally {
      info.mockRestore();
    }
  });
});
