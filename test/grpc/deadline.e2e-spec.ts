import { connect, constants, type ClientHttp2Session } from 'node:http2';
import { status as GrpcCode } from '@grpc/grpc-js';
import { loadSync, type MethodDefinition } from '@grpc/proto-loader';
import { ORDER_STATUS_PROTO_PATH, PROTO_LOADER_OPTIONS } from '@app/contracts';
import { bearer } from '../support/auth';
import { startTestApp, type TestApp } from '../support/test-app';
import { once, waitFor } from '../support/wait-for';

const serviceMethods = loadSync(ORDER_STATUS_PROTO_PATH, PROTO_LOADER_OPTIONS)[
  'orderstatus.v1.OrderStatusService'
] as Record<string, MethodDefinition<{ orderId: string }, unknown>>;

/** A gRPC message on the wire: compressed flag, 4-byte big-endian length, payload. */
function grpcFrame(payload: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

/**
 * A grpc-js client enforces its own deadline too (it cancels the call locally), so the
 * Subscribe deadline test in subscribe.e2e-spec.ts cannot tell who ended the call. This
 * client is a bare HTTP/2 stream that sends `grpc-timeout` and then just waits: the
 * status it gets can only come from the server (gRPC over HTTP/2 spec, "Timeout").
 */
describe('gRPC Subscribe deadline, enforced by the server', () => {
  let app: TestApp;
  let session: ClientHttp2Session | undefined;

  beforeEach(async () => {
    app = await startTestApp();
  });
  afterEach(async () => {
    session?.destroy();
    await app.close();
  });

  it('sends DEADLINE_EXCEEDED in the trailers and releases the subscription', async () => {
    await app.createOrder('raw-deadline-1');
    session = connect(`http://${app.grpcAddress}`);
    const stream = session.request({
      [constants.HTTP2_HEADER_METHOD]: 'POST',
      [constants.HTTP2_HEADER_PATH]: '/orderstatus.v1.OrderStatusService/Subscribe',
      [constants.HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc',
      te: 'trailers',
      'grpc-timeout': '300m',
      ...bearer(),
    });
    const started = Date.now();
    stream.end(grpcFrame(serviceMethods.Subscribe.requestSerialize({ orderId: 'raw-deadline-1' })));
    stream.resume();
    await waitFor(() => app.bus.subscriberCount('raw-deadline-1') === 1, 'subscribed');

    const trailers = await once<Record<string, string>>(stream, 'trailers', 3_000);
    expect(Number(trailers['grpc-status'])).toBe(GrpcCode.DEADLINE_EXCEEDED);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    await waitFor(() => app.bus.subscriberCount() === 0, 'subscriber released by the server');
    expect(app.bus.stats.connectionsByTransport.get('grpc')).toBe(0);
  });
});
