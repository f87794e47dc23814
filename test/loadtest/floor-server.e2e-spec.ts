import { connect } from 'node:http2';
import {
  fastifyFloorServerCommand,
  floorServerCommand,
} from '../../loadtest/src/framework-floors/floor-command';
import { AdminClient } from '../../loadtest/src/service/admin';
import { launchService, type RunningService } from '../../loadtest/src/service/launcher';

/**
 * The framework floors the overhead scenario runs beside the service and the bare server
 * for long-poll: each, started as the load test starts it, names the token its guard
 * takes, refuses requests without it, and answers polls as the bare server does (the same
 * body, 204 when the wait passes) on its HTTP/1.1 port and over h2 on its TLS port.
 */
describe.each([
  ['NestJS on Fastify', floorServerCommand],
  ['Fastify alone', fastifyFloorServerCommand],
])('load test framework floor: the bare long-poll on %s', (_name, command) => {
  jest.setTimeout(60_000);
  let floor: RunningService;
  let admin: AdminClient;

  beforeAll(async () => {
    floor = await launchService({ command: command() });
    admin = new AdminClient(floor, floor.token);
    await admin.prepare({ orders: 2, ratePerOrder: 20, prefix: 'floor' });
  });
  afterAll(() => floor?.stop());

  const url = (path: string): string => `http://127.0.0.1:${floor.httpPort}${path}`;
  const withToken = (): Record<string, string> => ({ authorization: `Bearer ${floor.token}` });

  it('names its token in the listening line and refuses a request without it (401)', async () => {
    expect(floor.token).toMatch(/^[0-9a-f]{32}$/);
    for (const headers of [{}, { authorization: 'Bearer nope' }]) {
      const poll = await fetch(url('/v1/orders/floor-1/events?after=0&wait=0'), { headers });
      const sim = await fetch(url('/v1/admin/simulator'), { headers });
      expect([poll.status, sim.status]).toEqual([401, 401]);
    }
    // The metrics the load test reads are public, as the service's are.
    const metrics = await fetch(url('/metrics'));
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(/^process_resident_memory_bytes \d+$/m);
  });

  it('answers a poll with what follows `after`, 204 when the wait passes, 404 for an unknown order', async () => {
    // A prepared order is created and shipped (seqs 1 and 2), as on the bare server.
    const last = await admin.lastSeq('floor-1');
    expect(last).toBe(2);
    const first = await fetch(url('/v1/orders/floor-1/events?after=0&wait=5'), {
      headers: withToken(),
    });
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({
      orderId: 'floor-1',
      events: [
        expect.objectContaining({ type: 'status', seq: 1, status: 'created' }),
        expect.objectContaining({ type: 'status', seq: 2, status: 'shipped' }),
      ],
      next: 2,
      completed: false,
    });
    const startedAt = Date.now();
    const empty = await fetch(url(`/v1/orders/floor-1/events?after=${last}&wait=1`), {
      headers: withToken(),
    });
    expect(empty.status).toBe(204);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(900);
    const unknown = await fetch(url('/v1/orders/nope/events?after=0'), { headers: withToken() });
    expect(unknown.status).toBe(404);

    // Held until the simulator publishes the next event.
    const held = fetch(url(`/v1/orders/floor-2/events?after=${last}&wait=10`), {
      headers: withToken(),
    });
    await admin.start();
    const next = await held;
    expect(next.status).toBe(200);
    const body = (await next.json()) as { events: { seq: number }[]; next: number };
    expect(body.events[0].seq).toBe(last + 1);
    expect(body.next).toBe(body.events.at(-1)?.seq);
    await admin.stop();
  });

  it('serves the same poll over h2 on its TLS port', async () => {
    const session = connect(`https://127.0.0.1:${floor.httpsPort}`, { rejectUnauthorized: false });
    try {
      const { status, text } = await new Promise<{ status: number; text: string }>(
        (resolve, reject) => {
          const req = session.request({
            ':path': '/v1/orders/floor-1/events?after=0&wait=0',
            ...withToken(),
          });
          let status = 0;
          let text = '';
          req.on('response', (h) => (status = Number(h[':status'])));
          req.setEncoding('utf8').on('data', (t: string) => (text += t));
          req.on('end', () => resolve({ status, text }));
          req.on('error', reject);
          req.end();
        },
      );
      expect(status).toBe(200);
      expect(JSON.parse(text)).toMatchObject({ orderId: 'floor-1', completed: false });
      expect(session.alpnProtocol).toBe('h2');
    } finally {
      session.close();
    }
  });
});
