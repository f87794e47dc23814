import { constants as h2, type ClientHttp2Session } from 'node:http2';
import { request } from 'undici';
import type { ServiceError } from '@grpc/grpc-js';
import type { OrderStatusClient } from '../../grpc/grpc-test-client';
import { ClientPool } from '../../ws/orders-client';
import { bearer } from '../../support/auth';
import { once } from '../../support/wait-for';

const ANSWER_TIMEOUT_MS = 5_000;

/**
 * Whether one principal may still open a stream on each transport: the HTTP status, the
 * gRPC outcome (`ok` once the first message came, else the status code name) and the
 * socket.io outcome (`ok`, or the error code of the handshake or the subscribe ack).
 * A principal whose slots leaked gets 429 / RESOURCE_EXHAUSTED / resource_exhausted.
 */
export interface StreamAccess {
  readonly sseH2: number;
  readonly longPollH2: number;
  readonly grpc: string;
  readonly ws: string;
}

export async function streamAccess(opts: {
  readonly session: ClientHttp2Session;
  readonly grpc: OrderStatusClient;
  readonly httpUrl: string;
  readonly token: string;
  readonly orderId: string;
}): Promise<StreamAccess> {
  const { session, token, orderId } = opts;
  return {
    sseH2: await h2Status(session, {
      ':path': `/v1/orders/${orderId}/stream?after=0`,
      accept: 'text/event-stream',
      ...bearer(token),
    }),
    // wait=0: answered at once, so the check itself holds no slot.
    longPollH2: await h2Status(session, {
      ':path': `/v1/orders/${orderId}/events?after=0&wait=0`,
      ...bearer(token),
    }),
    grpc: await grpcOutcome(opts.grpc, orderId),
    ws: await wsOutcome(opts.httpUrl, token, orderId),
  };
}

/** Everything allowed. */
export const ALL_OPEN: StreamAccess = { sseH2: 200, longPollH2: 200, grpc: 'ok', ws: 'ok' };

async function h2Status(
  session: ClientHttp2Session,
  headers: Record<string, string>,
): Promise<number> {
  const req = session.request({ ':method': 'GET', ...headers });
  req.on('error', () => undefined);
  req.on('data', () => undefined);
  const closed = once(req, 'close', ANSWER_TIMEOUT_MS);
  req.end();
  const res = await once<Record<string, unknown>>(req, 'response', ANSWER_TIMEOUT_MS);
  req.close(h2.NGHTTP2_CANCEL);
  await closed;
  return Number(res[':status']);
}

async function grpcOutcome(client: OrderStatusClient, orderId: string): Promise<string> {
  const call = client.subscribe({ orderId });
  const outcome = await new Promise<string>((resolve) => {
    const timer = setTimeout(() => resolve('no answer'), ANSWER_TIMEOUT_MS);
    call.once('data', () => {
      clearTimeout(timer);
      resolve('ok');
    });
    call.once('error', (err: ServiceError) => {
      clearTimeout(timer);
      resolve(`code ${err.code}: ${err.details}`);
    });
  });
  call.on('error', () => undefined);
  call.cancel();
  return outcome;
}

async function wsOutcome(httpUrl: string, token: string, orderId: string): Promise<string> {
  const pool = new ClientPool();
  try {
    const client = await pool.connect(httpUrl, { token });
    const ack = await client.subscribe(orderId, 0);
    return ack.ok ? 'ok' : `ack ${ack.error.code}`;
  } catch (err) {
    const data = (err as { data?: { code?: string } }).data;
    return `refused ${data?.code ?? String(err)}`;
  } finally {
    await pool.closeAll();
  }
}

/** `/health/live` answers 200 (the process lives and its event loop turns). */
export async function isLive(httpUrl: string): Promise<boolean> {
  const res = await request(`${httpUrl}/health/live`);
  await res.body.dump();
  return res.statusCode === 200;
}
