import { request } from 'undici';
import { Metadata, status as GrpcCode } from '@grpc/grpc-js';
import { ErrorCode, type StreamDomain } from '@app/contracts';
import { PAYLOAD_DOMAIN } from '@app/payload-domain';
import { watchOrder, type OrderWatch, type TransportName } from '@app/client/node';
import {
  collect,
  orderStatusClient,
  seqsOf,
  type OrderStatusClient,
} from '../grpc/grpc-test-client';
import { ClientPool } from '../ws/orders-client';
import { startTestApp, type TestApp } from '../support/test-app';
import { WsStream } from '../support/websocket-stream';
import { waitFor, within } from '../support/wait-for';

/** A refusal comes at once; a client left waiting in silence is the defect this catches. */
const REFUSAL_TIMEOUT_MS = 3_000;

type SubscribeWithMetadata = (
  req: { orderId: string },
  metadata: Metadata,
) => ReturnType<OrderStatusClient['subscribe']>;

const TRANSPORTS: readonly TransportName[] = ['sse', 'ws', 'websocket', 'longpoll', 'grpc'];

/** The message names both domains, whichever transport carries it. */
const NAMES_BOTH = /payload.*order|order.*payload/;

/**
 * A client that expects another domain than the service streams is refused when it
 * subscribes, with a typed error on every transport (HTTP 409, gRPC FAILED_PRECONDITION,
 * a socket.io error ack, a WebSocket close 4409), never left receiving nothing; a client
 * that names the right domain, or none, is served as before.
 */
describe('a subscribe for another domain than the service streams', () => {
  let app: TestApp;
  const pool = new ClientPool();
  const watches: OrderWatch[] = [];

  beforeAll(async () => {
    app = await startTestApp({ STREAM_DOMAIN: 'payload' });
    for (let i = 0; i < 2; i++) {
      const res = await request(`${app.httpUrl}/v1/streams/dm-1/payload`, {
        method: 'POST',
        headers: { ...app.authHeaders, 'content-type': 'application/json' },
        body: JSON.stringify({ bytes: 8 }),
      });
      expect(res.statusCode).toBe(201);
      await res.body.dump();
    }
  });
  afterEach(async () => {
    await pool.closeAll();
    for (const w of watches.splice(0)) {
      w.close();
      await w.done;
    }
  });
  afterAll(() => app?.close());

  async function get(path: string) {
    const res = await request(`${app.httpUrl}${path}`, {
      headers: app.authHeaders,
      headersTimeout: REFUSAL_TIMEOUT_MS,
    });
    const type = String(res.headers['content-type']);
    const body: unknown = type.startsWith('application/json') ? await res.body.json() : undefined;
    if (body === undefined) res.body.destroy();
    return { status: res.statusCode, body };
  }

  it.each([
    ['SSE', '/v1/orders/dm-1/stream'],
    ['long-poll', '/v1/orders/dm-1/events'],
  ])('%s: 409 failed_precondition naming both domains', async (_name, path) => {
    const wrong = await get(`${path}?domain=order&wait=0`);
    expect(wrong.status).toBe(409);
    expect(wrong.body).toMatchObject({
      error: { code: ErrorCode.FailedPrecondition, message: expect.stringMatching(NAMES_BOTH) },
    });
    const malformed = await get(`${path}?domain=Order%21&wait=0`);
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ error: { code: ErrorCode.InvalidArgument } });
    for (const ok of [`${path}?domain=payload&wait=0`, `${path}?wait=0`]) {
      expect((await get(ok)).status).toBe(200);
    }
  });

  function openWs(query: string): Promise<WsStream> {
    const url = `${app.httpUrl.replace(/^http/, 'ws')}/v1/orders/dm-1/ws${query}`;
    return WsStream.open(url, { protocols: ['order-status.v1', `bearer.${app.defaultToken}`] });
  }

  it('raw WebSocket: an error frame, then close 4409 failed_precondition', async () => {
    const wrong = await openWs('?domain=order');
    const closed = await within(wrong.closed, REFUSAL_TIMEOUT_MS, 'still open');
    wrong.close();
    expect(closed).toEqual({ code: 4409, reason: ErrorCode.FailedPrecondition });
    expect(wrong.opened).toBeUndefined();
    expect(wrong.of('error')).toEqual([
      { code: ErrorCode.FailedPrecondition, message: expect.stringMatching(NAMES_BOTH) },
    ]);
    for (const ok of ['?domain=payload', '']) {
      const right = await openWs(ok);
      await right.until((f) => f.length >= 2, 'the retained payloads');
      expect(right.seqs(['payload'])).toEqual([1, 2]);
      right.close();
    }
  });

  it('socket.io: an error ack with failed_precondition naming both domains', async () => {
    const client = await pool.connect(app.httpUrl);
    const subscribe = (payload: object) =>
      client.socket
        .timeout(REFUSAL_TIMEOUT_MS)
        .emitWithAck('subscribe', payload as { orderId: string; afterSeq?: number });
    expect(await subscribe({ orderId: 'dm-1', afterSeq: 0, domain: 'order' })).toEqual({
      ok: false,
      error: { code: ErrorCode.FailedPrecondition, message: expect.stringMatching(NAMES_BOTH) },
    });
    expect(await subscribe({ orderId: 'dm-1', domain: 7 })).toMatchObject({
      ok: false,
      error: { code: ErrorCode.InvalidArgument },
    });
    expect(await subscribe({ orderId: 'dm-1', domain: 'payload' })).toMatchObject({ ok: true });
  });

  it('gRPC: FAILED_PRECONDITION naming both domains', async () => {
    const client = orderStatusClient(app.grpcAddress);
    try {
      const subscribe = (domain?: string) => {
        const md = new Metadata();
        if (domain !== undefined) md.set('stream-domain', domain);
        // grpc-js's generated method takes metadata before the call options.
        const call = (client.subscribe as unknown as SubscribeWithMetadata)(
          { orderId: 'dm-1' },
          md,
        );
        return collect(call, REFUSAL_TIMEOUT_MS);
      };
      const wrong = subscribe('order');
      expect(await wrong.status).toMatchObject({
        code: GrpcCode.FAILED_PRECONDITION,
        details: expect.stringMatching(NAMES_BOTH),
      });
      expect(wrong.items).toEqual([]);
      for (const domain of ['payload', undefined]) {
        const right = subscribe(domain);
        await waitFor(() => right.items.length >= 2, 'the retained payloads');
        expect(seqsOf(right.items)).toEqual([1, 2]);
      }
    } finally {
      client.close();
    }
  });

  /** A watch of `dm-1` decoding `domain` (undefined: the library's default, the order domain). */
  function watch(transport: TransportName, domain?: StreamDomain): OrderWatch {
    const w = watchOrder('dm-1', {
      transport,
      baseUrl: transport === 'grpc' ? app.grpcAddress : app.httpUrl,
      token: app.defaultToken,
      longPollWaitS: 1,
      ...(domain === undefined ? {} : { domain }),
    });
    watches.push(w);
    void (async () => {
      for await (const _item of w);
    })();
    return w;
  }

  it.each(TRANSPORTS)(
    'the client library over %s: the watch ends with the refusal at once',
    async (transport) => {
      const w = watch(transport);
      const end = await within(w.done, REFUSAL_TIMEOUT_MS, 'silent');
      expect(end).toMatchObject({
        kind: 'end',
        reason: 'error',
        error: {
          code: ErrorCode.FailedPrecondition,
          message: expect.stringMatching(NAMES_BOTH),
        },
      });
      const right = watch(transport, PAYLOAD_DOMAIN);
      await waitFor(() => right.cursor === 2, 'the retained payloads');
    },
  );
});
