import { connect as netConnect } from 'node:net';
import { request } from 'undici';
import { OrderStatus } from '@app/order-domain';
import { WebSocketKeepalive } from '../../apps/order-status/src/transports/websocket/websocket-keepalive.service';
import { h2Connect, h2Get } from '../support/h2-client';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { UpgradeRefused, WsStream } from '../support/websocket-stream';
import { ClientPool, ended } from '../ws/orders-client';

const LIFECYCLE = [
  OrderStatus.Paid,
  OrderStatus.Packed,
  OrderStatus.Shipped,
  OrderStatus.OutForDelivery,
  OrderStatus.Delivered,
];

describe('raw WebSocket transport (/v1/orders/:orderId/ws)', () => {
  let app: TestApp;
  const streams: WsStream[] = [];
  const pool = new ClientPool();

  beforeAll(async () => {
    app = await startTestApp({
      BUS_RING_SIZE: '4',
      LIMIT_CONNECTIONS_PER_PRINCIPAL: '3',
      WEBSOCKET_PING_INTERVAL_MS: '1000',
      WEBSOCKET_MAX_PAYLOAD_BYTES: '256',
      // A peer that ignores the close frame is cut this long after it.
      STREAM_END_GRACE_MS: '500',
    });
  });
  afterEach(async () => {
    for (const s of streams.splice(0)) s.close();
    await pool.closeAll();
    await waitFor(() => app.bus.subscriberCount() === 0, 'every subscription released');
  });
  afterAll(() => app.close());

  const url = (path: string, base = app.httpUrl) => `${base.replace(/^http/, 'ws')}${path}`;
  async function open(
    path: string,
    opts: Parameters<typeof WsStream.open>[1] = { headers: app.authHeaders },
  ): Promise<WsStream> {
    const s = await WsStream.open(url(path), opts);
    streams.push(s);
    return s;
  }

  it('streams one order in order, ends with `end` and 1000, resumes by `after`, beside socket.io', async () => {
    await app.createOrder('w-a');
    const s = await open('/v1/orders/w-a/ws');
    // socket.io's engine answers its own upgrades on the same listener.
    const io = await pool.connect(app.httpUrl);
    expect(await io.subscribe('w-a')).toMatchObject({ ok: true });
    for (const status of LIFECYCLE) await app.publish('w-a', status);
    expect(await s.closed).toEqual({ code: 1000, reason: 'completed' });
    expect(s.seqs()).toEqual([1, 2, 3, 4, 5, 6]);
    expect(s.binaryFrames).toBe(0);
    expect(s.opened).toEqual({ orderId: 'w-a', afterSeq: 0 });
    expect(s.frames.at(-1)).toEqual({ type: 'end', data: { reason: 'completed' } });
    expect(s.frames[1]).toEqual({
      type: 'status',
      data: expect.objectContaining({ orderId: 'w-a', seq: 2, status: 'paid' }),
    });
    await io.until(ended('w-a'), 'socket.io stream ended too');

    // Resume after 4 (within the ring of 4): 5 and 6 once, then the end.
    const resumed = await open('/v1/orders/w-a/ws?after=4');
    expect((await resumed.closed).code).toBe(1000);
    expect(resumed.seqs()).toEqual([5, 6]);
  });

  it('sends `reset` for a resume point beyond retention or ahead, and `tracking` items', async () => {
    await app.createOrder(
      'w-r',
      OrderStatus.Paid,
      OrderStatus.Packed,
      OrderStatus.Shipped,
      'tracking',
      'tracking',
    );
    const old = await open('/v1/orders/w-r/ws?after=1');
    await old.until((f) => f.length > 0, 'reset');
    expect(old.frames[0]).toEqual({
      type: 'reset',
      data: {
        reason: 'beyond_retention',
        snapshot: expect.objectContaining({ orderId: 'w-r', lastSeq: 6 }),
      },
    });
    const ahead = await open('/v1/orders/w-r/ws?after=99');
    await ahead.until((f) => f.length > 0, 'ahead reset');
    expect(ahead.of('reset')[0]).toMatchObject({ reason: 'ahead_of_last_seq' });
    const live = await open('/v1/orders/w-r/ws?after=6');
    await app.track('w-r');
    await live.until((f) => f.length > 0, 'tracking');
    expect(live.frames[0]).toMatchObject({ type: 'tracking', data: { seq: 7, location: {} } });
  });

  it('authenticates by header, `bearer.` subprotocol, ticket and cookie; refuses with 4401/4404/403/4429', async () => {
    await app.createOrder('w-auth');
    const headerless = { headers: {} };
    const viaProtocol = await open('/v1/orders/w-auth/ws', {
      protocols: ['order-status.v1', `bearer.${app.defaultToken}`],
    });
    expect(viaProtocol.ws.protocol).toBe('order-status.v1');
    const ticketRes = await request(`${app.httpUrl}/v1/stream-tickets`, {
      method: 'POST',
      headers: { ...app.authHeaders, 'content-type': 'application/json' },
      body: JSON.stringify({ orderId: 'w-auth' }),
    });
    const { ticket } = (await ticketRes.body.json()) as { ticket: string };
    const viaTicket = await open(`/v1/orders/w-auth/ws?ticket=${ticket}`, headerless);
    const session = await request(`${app.httpUrl}/v1/session`, {
      method: 'POST',
      headers: app.authHeaders,
    });
    const cookie = String(session.headers['set-cookie']).split(';')[0];
    const viaCookie = await open('/v1/orders/w-auth/ws', { headers: { cookie } });
    for (const s of [viaProtocol, viaTicket, viaCookie]) {
      await s.until((f) => f.length === 1, 'first event');
    }
    // The principal holds 3 of its 3 slots: a fourth stream is refused, typed.
    const over = await open('/v1/orders/w-auth/ws');
    expect(await over.closed).toEqual({ code: 4429, reason: 'resource_exhausted' });
    expect(over.opened).toBeUndefined();
    expect(over.frames).toEqual([
      { type: 'error', data: expect.objectContaining({ code: 'resource_exhausted' }) },
    ]);

    // A used ticket, no credentials, a bad token, someone else's order.
    const refusals: [string, Parameters<typeof WsStream.open>[1], number, string][] = [
      [`/v1/orders/w-auth/ws?ticket=${ticket}`, headerless, 4401, 'unauthenticated'],
      ['/v1/orders/w-auth/ws', headerless, 4401, 'unauthenticated'],
      [
        '/v1/orders/w-auth/ws',
        { headers: { authorization: 'Bearer nope' } },
        4401,
        'unauthenticated',
      ],
      [
        '/v1/orders/w-auth/ws',
        {
          headers: {
            authorization: `Bearer ${app.token({ sub: 'cust', scopes: ['orders:read'] })}`,
          },
        },
        4404,
        'not_found',
      ],
    ];
    for (const [path, opts, code, reason] of refusals) {
      const s = await open(path, opts);
      expect([path, await s.closed]).toEqual([path, { code, reason }]);
      expect(s.of('error')).toEqual([{ code: reason, message: expect.any(String) }]);
    }
    // A foreign Origin is refused before the upgrade (cross-site WebSocket hijacking).
    const foreign = WsStream.open(url('/v1/orders/w-auth/ws'), {
      headers: app.authHeaders,
      origin: 'https://evil.example',
    });
    const refused = await foreign.then(
      () => undefined,
      (e: unknown) => e as UpgradeRefused,
    );
    expect(refused?.status).toBe(403);
    expect(JSON.parse(refused?.body ?? '') as unknown).toMatchObject({
      error: { code: 'permission_denied' },
    });
  });

  it('answers bad input with typed closes while another stream keeps flowing', async () => {
    await app.createOrder('w-ok');
    const healthy = await open('/v1/orders/w-ok/ws?after=1');
    const cases: [string, number, string][] = [
      ['/v1/orders/nope/ws', 4404, 'not_found'],
      ['/v1/orders/bad!id/ws', 4400, 'invalid_argument'],
      ['/v1/orders/%E0%A4%A/ws', 4400, 'invalid_argument'],
      ['/v1/orders/w-ok/ws?after=-1', 4400, 'invalid_argument'],
    ];
    for (const [path, code, reason] of cases) {
      const s = await open(path);
      expect([path, await s.closed]).toEqual([path, { code, reason }]);
    }
    // The stream takes no messages: a message is a policy violation, a huge one 1009.
    const talker = await open('/v1/orders/w-ok/ws?after=1');
    talker.ws.send('hello');
    expect(await talker.closed).toEqual({ code: 1008, reason: 'invalid_argument' });
    const huge = await open('/v1/orders/w-ok/ws?after=1');
    huge.ws.send('x'.repeat(1_000));
    expect((await huge.closed).code).toBe(1009);
    // A broken frame (unmasked, RFC 6455 section 5.1) after a real upgrade: a 1002 close
    // frame, and a peer that never answers it is cut after the grace period.
    const raw = netConnect(app.ports.http, '127.0.0.1');
    raw.on('error', () => {});
    raw.write(
      'GET /v1/orders/w-ok/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${app.defaultToken}\r\n\r\n`,
    );
    let received = Buffer.alloc(0);
    raw.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
    await waitFor(() => received.includes('\r\n\r\n'), '101 answer');
    raw.write(Buffer.from([0x81, 0x02, 0x68, 0x69]));
    await new Promise((resolve) => raw.once('close', resolve));
    // Close frame (0x88), then the code 1002 in network byte order.
    expect(received.includes(Buffer.from([0x88, 0x02, 0x03, 0xea]))).toBe(true);

    await app.publish('w-ok', OrderStatus.Paid);
    await healthy.until((f) => f.length === 1, 'healthy stream still served');
    await waitFor(() => app.bus.subscriberCount() === 1, 'only the healthy stream subscribed');
  });

  it('pings every period and cuts a peer that stops answering', async () => {
    await app.createOrder('w-ka');
    const live = await open('/v1/orders/w-ka/ws');
    let pings = 0;
    live.ws.on('ping', () => pings++);
    const dead = await open('/v1/orders/w-ka/ws', { headers: app.authHeaders, autoPong: false });
    const keepalive = app.app.get(WebSocketKeepalive);
    expect((await dead.closed).code).toBe(1006);
    expect(pings).toBeGreaterThanOrEqual(1);
    expect(live.ws.readyState).toBe(live.ws.OPEN);
    await waitFor(() => keepalive.size === 1, 'only the live socket on the keepalive');
  });

  it('serves wss on the TLS port (HTTP/1.1 upgrade)', async () => {
    await app.createOrder('w-tls');
    const tls = await WsStream.open(url('/v1/orders/w-tls/ws', app.httpsUrl), {
      headers: app.authHeaders,
      // The development certificate names localhost, not 127.0.0.1.
      ca: app.tlsCert,
      rejectUnauthorized: false,
    });
    streams.push(tls);
    await tls.until((f) => f.length === 1, 'event over wss');
  });

  it('answers a plain GET (no Upgrade) with 426, `Upgrade: websocket` and a typed error, on HTTP/1.1 and HTTP/2', async () => {
    const res = await request(`${app.httpUrl}/v1/orders/w-plain/ws`, { headers: app.authHeaders });
    expect(res.statusCode).toBe(426);
    expect(res.headers.upgrade).toBe('websocket');
    expect(await res.body.json()).toEqual({
      error: {
        code: 'failed_precondition',
        message: expect.stringContaining('Upgrade: websocket'),
      },
    });
    // HTTP/2 forbids the Upgrade header (RFC 9113 section 8.2.2): the status and body alone.
    const h2 = await h2Connect(app.httpsUrl, app.tlsCert);
    try {
      const res2 = await h2Get(h2, '/v1/orders/w-plain/ws');
      expect(res2.status).toBe(426);
      expect(res2.headers.upgrade).toBeUndefined();
      expect(JSON.parse(res2.body)).toMatchObject({ error: { code: 'failed_precondition' } });
    } finally {
      h2.close();
    }
  });
});
