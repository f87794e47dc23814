import Fastify, { type FastifyInstance } from 'fastify';
import { DrainGate } from './drain-gate';
import { registerHttpDrainGate, type DrainAnswer } from './http-drain-gate';

describe('registerHttpDrainGate', () => {
  let draining: boolean;
  let fastify: FastifyInstance;
  const streams: DrainAnswer = {
    accepts: (req) => req.headers.accept === 'text/x-stream',
    send: (reply, retryAfterMs) => void reply.status(200).send(`retry ${retryAfterMs}`),
  };

  beforeEach(async () => {
    draining = false;
    fastify = Fastify();
    registerHttpDrainGate(fastify, new DrainGate(() => draining, 1_000), [streams]);
    fastify.get('/*', () => 'served');
    await fastify.ready();
  });
  afterEach(() => fastify.close());

  it('serves every request until the drain starts', async () => {
    expect((await fastify.inject('/v1/orders/a/events')).body).toBe('served');
  });

  it('answers 503 with Retry-After while draining, and lets probes and metrics through', async () => {
    draining = true;
    const api = await fastify.inject('/v1/orders/a/events');
    expect(api.statusCode).toBe(503);
    expect(api.json()).toMatchObject({ error: { code: 'unavailable' } });
    expect(Number(api.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(api.headers.connection).toBe('close');
    expect((await fastify.inject('/health/ready')).body).toBe('served');
    expect((await fastify.inject('/metrics')).body).toBe('served');
  });

  it("hands a transport's own requests to its answer, with the gate's advice", async () => {
    draining = true;
    const res = await fastify.inject({
      url: '/v1/orders/a/stream',
      headers: { accept: 'text/x-stream' },
    });
    expect(res.statusCode).toBe(200);
    const retryMs = Number(/^retry (\d+)$/.exec(res.body)?.[1]);
    expect(retryMs).toBeGreaterThanOrEqual(100);
    expect(retryMs).toBeLessThan(1_100);
  });
});
