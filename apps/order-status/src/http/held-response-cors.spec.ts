import { FastifyAdapter } from '@nestjs/platform-fastify';
import { skipCorsCopyOnHeldResponses } from './held-response-cors';

const ORIGIN = 'https://app.example';

/**
 * Against the installed NestJS FastifyAdapter: what `reply.raw` holds when a handler
 * runs, and what the response carries.
 */
async function rawHeadersSeen(skip: boolean, url: string) {
  const adapter = new FastifyAdapter();
  adapter.enableCors({ origin: [ORIGIN], credentials: true });
  if (skip) expect(skipCorsCopyOnHeldResponses(adapter)).toBe(true);
  const fastify = adapter.getInstance();
  const handler = (_req: unknown, reply: { raw: { getHeaderNames(): string[] } }) => ({
    raw: reply.raw.getHeaderNames(),
  });
  fastify.get('/v1/orders/:orderId/stream', handler);
  fastify.get('/v1/orders/:orderId/events', handler);
  fastify.get('/v1/orders/:orderId', handler);
  await fastify.ready();
  try {
    const res = await fastify.inject({ url, headers: { origin: ORIGIN } });
    return {
      raw: (JSON.parse(res.body) as { raw: string[] }).raw.sort(),
      allowOrigin: res.headers['access-control-allow-origin'],
    };
  } finally {
    await fastify.close();
  }
}

describe('skipCorsCopyOnHeldResponses', () => {
  const copied = ['access-control-allow-credentials', 'access-control-allow-origin', 'vary'];

  it('NestJS copies the CORS headers onto every Node response (what this module adjusts)', async () => {
    expect(await rawHeadersSeen(false, '/v1/orders/o-1/stream')).toEqual({
      raw: copied,
      allowOrigin: ORIGIN,
    });
  });

  it.each(['/v1/orders/o-1/stream', '/v1/orders/o-1/events'])(
    'leaves the Node response of %s untouched; the reply keeps its CORS headers',
    async (url) => {
      expect(await rawHeadersSeen(true, url)).toEqual({ raw: [], allowOrigin: ORIGIN });
    },
  );

  it('keeps the copy on every other route', async () => {
    expect(await rawHeadersSeen(true, '/v1/orders/o-1')).toEqual({
      raw: copied,
      allowOrigin: ORIGIN,
    });
  });
});
