import type { Http2SecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { adminAnswer, metricsText, orderBody } from '../bare-server/bare-api';
import { OrderLog } from '../bare-server/order-log';
import { announceFloor, FLOOR_BEARER, floorListen, floorServers } from './floor-http';
import { floorPoll } from './floor-poll';

/**
 * The Fastify half of the framework floor: the same long-poll as the NestJS floor
 * (floor-server.ts), on the same Fastify with the same listeners, with Fastify's own
 * routing and hooks only. Between the bare server and the NestJS floor it tells what
 * Fastify costs a request and what Nest's router, guard and handler chain add to it. As
 * Fastify's documentation writes it: an onRequest hook for the token, route params and
 * query from the request, an async handler returning the body.
 */
const log = new OrderLog();

interface PollRoute {
  Params: { orderId: string };
  Querystring: { after?: string; wait?: string };
}

async function main(): Promise<void> {
  const servers = await floorServers();
  const app = Fastify<Http2SecureServer>({
    http2: true,
    https: servers.https,
    serverFactory: servers.serverFactory,
  });
  // The guard: answered here, the request goes no further.
  app.addHook('onRequest', async (req, reply) => {
    if (req.url.startsWith('/v1/') && req.headers.authorization !== FLOOR_BEARER) {
      return reply.code(401).send({ statusCode: 401, message: 'Unauthorized' });
    }
    return undefined;
  });

  app.get<PollRoute>('/v1/orders/:orderId/events', (req, reply) => {
    const { orderId } = req.params;
    if (log.get(orderId) === undefined) return reply.code(404).send({ statusCode: 404 });
    return floorPoll(log, reply, orderId, req.query.after, req.query.wait);
  });
  // The stream's state, at both domains' routes.
  for (const route of ['/v1/orders/:orderId', '/v1/streams/:orderId']) {
    app.get<PollRoute>(route, async (req, reply) => {
      const body = orderBody(log, req.params.orderId);
      return body ?? reply.code(404).send({ statusCode: 404 });
    });
  }
  app.get('/v1/admin/simulator', async () => adminAnswer(log, 'GET', '/v1/admin/simulator', {}));
  app.put('/v1/admin/simulator', async (req) =>
    adminAnswer(log, 'PUT', '/v1/admin/simulator', (req.body ?? {}) as Record<string, unknown>),
  );
  app.post<{ Params: { action: string } }>('/v1/admin/simulator/:action', async (req, reply) => {
    const answer = adminAnswer(log, 'POST', `/v1/admin/simulator/${req.params.action}`, {});
    return answer ?? reply.code(404).send({ statusCode: 404 });
  });
  app.get('/metrics', async (_req, reply) => reply.type('text/plain').send(metricsText()));

  const { host, port } = floorListen();
  await app.listen({ port, host });
  const https = (app.server.address() as AddressInfo).port;
  await announceFloor(servers, https, async () => {
    log.stop();
    await app.close();
  });
}

void main();
