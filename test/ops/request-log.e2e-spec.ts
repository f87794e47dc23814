import { bearer } from '../support/auth';
import { logLines, spawnService, type ServiceProcess } from './service-process';

interface RequestLine {
  req?: { method?: string; url?: string; headers?: Record<string, unknown> };
  res?: { statusCode?: number };
  reqId?: unknown;
  responseTime?: number;
}

/** The service's request lines (pino-http) for `path`, waiting up to 5 s for `count`. */
async function requestLines(
  service: ServiceProcess,
  path: string,
  count = 1,
): Promise<RequestLine[]> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const found = logLines(service, 'request completed').filter((l) =>
      (l as RequestLine).req?.url?.startsWith(path),
    ) as RequestLine[];
    if (found.length >= count || Date.now() > deadline) return found;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * One JSON line per ordinary request, against the production build. Under NestJS 12 on
 * Fastify no request was logged at all: nestjs-pino mounts its middleware on
 * `{/*splat}`, which @fastify/middie 9.3 turns into `/{/*splat}` (a path that only
 * matches URLs starting with `//`), so pino-http never ran.
 */
describe('request log (production build)', () => {
  let service: ServiceProcess;

  beforeAll(async () => {
    service = await spawnService();
  }, 90_000);

  afterAll(async () => {
    service.kill();
    await service.exited;
  });

  it('writes one line per REST request, with method, URL, status and a request id', async () => {
    const ok = await fetch(`${service.httpUrl}/v1/orders/order-1`, { headers: bearer() });
    const denied = await fetch(`${service.httpUrl}/v1/orders/order-2`);
    await Promise.all([ok.arrayBuffer(), denied.arrayBuffer()]);
    expect(denied.status).toBe(401);

    const [first] = await requestLines(service, '/v1/orders/order-1');
    expect(first).toMatchObject({ req: { method: 'GET', url: '/v1/orders/order-1' } });
    expect(first?.res?.statusCode).toBe(ok.status);
    expect(first?.reqId).toBeDefined();
    expect(typeof first?.responseTime).toBe('number');
    // The bearer token is never written.
    expect(first?.req?.headers?.authorization).toBe('[REDACTED]');

    const [second] = await requestLines(service, '/v1/orders/order-2');
    expect(second?.res?.statusCode).toBe(401);
  });

  it('logs a request that an earlier Fastify hook answers (a malformed order id)', async () => {
    const res = await fetch(`${service.httpUrl}/v1/orders/!bad`, { headers: bearer() });
    await res.arrayBuffer();
    expect(res.status).toBe(400);
    const [line] = await requestLines(service, '/v1/orders/!bad');
    expect(line?.res?.statusCode).toBe(400);
  });

  it('redacts credentials carried in the URL', async () => {
    const res = await fetch(
      `${service.httpUrl}/v1/orders/order-3?ticket=secret-value&access_token=secret-value`,
    );
    await res.arrayBuffer();
    const [line] = await requestLines(service, '/v1/orders/order-3');
    expect(line?.req?.url).toBe('/v1/orders/order-3?ticket=[REDACTED]&access_token=[REDACTED]');
    expect(JSON.stringify(service.lines)).not.toContain('secret-value');
  });

  it('leaves probes, scrapes and polls out (a poll gets connection lines instead)', async () => {
    for (const path of ['/health/live', '/health/ready', '/metrics']) {
      await (await fetch(`${service.httpUrl}${path}`)).arrayBuffer();
    }
    const poll = await fetch(`${service.httpUrl}/v1/orders/order-5/events?after=0&wait=0`, {
      headers: bearer(),
    });
    await poll.arrayBuffer();
    expect(poll.status).toBeLessThan(500);
    // A logged request after them: once its line is out, theirs would be too.
    await (
      await fetch(`${service.httpUrl}/v1/orders/order-4`, { headers: bearer() })
    ).arrayBuffer();
    expect(await requestLines(service, '/v1/orders/order-4')).toHaveLength(1);
    expect(await requestLines(service, '/health', 0)).toEqual([]);
    expect(await requestLines(service, '/metrics', 0)).toEqual([]);
    expect(await requestLines(service, '/v1/orders/order-5', 0)).toEqual([]);
    expect(logLines(service, 'connection closed').some((l) => l.transport === 'long-poll')).toBe(
      true,
    );
  });
});
