import Fastify, { type FastifyInstance } from 'fastify';
import { PinoLogger, type Params } from 'nestjs-pino';
import { request } from 'undici';
import { REQUEST_LOG_OPTIONS } from './logging';
import { registerRequestLog } from './request-log';
import { jsonLineSink } from './testing/json-lines';

interface Line {
  msg?: string;
  reqId?: unknown;
  req?: { url?: string };
  res?: { statusCode?: number };
}

// One sink for both blocks below: nestjs-pino's root logger is built once per process.
const { lines, sink } = jsonLineSink<Line>();
const params: Params = { pinoHttp: [{ level: 'info', ...REQUEST_LOG_OPTIONS }, sink] };

/**
 * The request-log hook on a real Fastify server (port 0) with the service's pino-http
 * options, its lines captured: what is logged, what is not, and which lines carry the
 * request's id.
 */
describe.each([
  ['with the request context', true],
  ['without the request context', false],
])('registerRequestLog %s', (_name, withContext) => {
  let app: FastifyInstance;
  let base: string;

  beforeAll(async () => {
    app = Fastify();
    registerRequestLog(app, params, { context: withContext });
    // A later hook that answers some requests itself (as the order-id gate does).
    app.addHook('onRequest', (req, reply, done) => {
      if (req.url.startsWith('/v1/orders/bad')) void reply.status(400).send({ code: 'bad' });
      else done();
    });
    const logger = new PinoLogger(params);
    app.get('/v1/orders/:orderId', async () => {
      logger.info('inside a request');
      return { ok: true };
    });
    app.get('/health/live', async () => {
      logger.info('inside a probe');
      return { status: 'ok' };
    });
    app.get('/v1/orders/:orderId/events', async () => {
      logger.info('inside a poll');
      return { events: [] };
    });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => app.close());
  beforeEach(() => lines.splice(0));

  const get = async (path: string) => {
    const res = await request(`${base}${path}`);
    await res.body.dump();
    return res.statusCode;
  };
  const completed = (path: string) =>
    lines.filter((l) => l.msg === 'request completed' && l.req?.url === path);

  it('logs an ordinary request once; lines logged while handling it carry its id only with the context', async () => {
    expect(await get('/v1/orders/o-1')).toBe(200);
    const [line] = completed('/v1/orders/o-1');
    expect(line?.res?.statusCode).toBe(200);
    expect(line?.reqId).toBeDefined();
    const inside = lines.find((l) => l.msg === 'inside a request');
    expect(inside).toBeDefined();
    expect(inside?.reqId).toBe(withContext ? line?.reqId : undefined);
  });

  it('gives each request its own id', async () => {
    await get('/v1/orders/o-2');
    await get('/v1/orders/o-3');
    const ids = [...completed('/v1/orders/o-2'), ...completed('/v1/orders/o-3')].map(
      (l) => l.reqId,
    );
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(2);
  });

  it('logs a request that a later hook answers', async () => {
    expect(await get('/v1/orders/bad-id')).toBe(400);
    expect(completed('/v1/orders/bad-id').map((l) => l.res?.statusCode)).toEqual([400]);
  });

  it('logs requests for unknown paths', async () => {
    expect(await get('/v1/nothing')).toBe(404);
    expect(completed('/v1/nothing').map((l) => l.res?.statusCode)).toEqual([404]);
  });

  it.each([
    ['a held route', '/v1/orders/o-4/events?after=0', 'inside a poll'],
    ['a probe', '/health/live', 'inside a probe'],
  ])('leaves %s alone: no request line, no request context', async (_kind, path, logged) => {
    expect(await get(path)).toBe(200);
    expect(lines.filter((l) => l.msg === 'request completed')).toEqual([]);
    const inside = lines.find((l) => l.msg === logged);
    expect(inside).toBeDefined();
    expect(inside?.reqId).toBeUndefined();
  });
});
