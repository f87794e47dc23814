import { connect, type ClientHttp2Session } from 'node:http2';
import { startTestApp, type TestApp } from '../support/test-app';
import { once } from '../support/wait-for';

/**
 * Server keepalive: grpc-js sends an HTTP/2 PING on every connection each
 * `grpc.keepalive_time_ms` and drops the connection if no ack comes within
 * `grpc.keepalive_timeout_ms` (grpc/doc/keepalive.md). Some grpc-js releases did not
 * send server pings at all, so this is checked on the wire rather than trusted.
 *
 * The client here is a bare node:http2 session (h2c with prior knowledge, which is what
 * gRPC speaks on an insecure port): it never pings itself and Node answers the server's
 * PING automatically, emitting 'ping' for every PING frame it receives.
 *
 * Manual check with grpc-js traces (server-side lines, the client's own keepalive
 * trace only covers pings the client sends):
 *   GRPC_TRACE=keepalive GRPC_VERBOSITY=DEBUG GRPC_KEEPALIVE_TIME_MS=1000 \
 *     SIMULATOR_ENABLED=false npx tsx apps/order-status/src/main.ts
 * then open any client (e.g. `grpcurl -plaintext 127.0.0.1:50051 list` or a Subscribe
 * stream); the service logs "Sending ping with timeout 10000ms" then
 * "Received ping response" once a second per connection.
 */
describe('gRPC server keepalive', () => {
  let app: TestApp;
  let session: ClientHttp2Session | undefined;

  beforeEach(async () => {
    app = await startTestApp({ GRPC_KEEPALIVE_TIME_MS: '1000' });
  });
  afterEach(async () => {
    session?.destroy();
    await app.close();
  });

  it('the server sends HTTP/2 PINGs on an idle connection every keepalive time', async () => {
    session = connect(`http://${app.grpcAddress}`);
    await once(session, 'connect');
    const started = Date.now();
    await once(session, 'ping', 3_000);
    const first = Date.now() - started;
    await once(session, 'ping', 3_000);
    const second = Date.now() - started;
    expect(first).toBeGreaterThanOrEqual(800);
    expect(second - first).toBeGreaterThanOrEqual(800);
    // The session survived: every ping was acked and the server kept the connection.
    expect(session.closed || session.destroyed).toBe(false);
  });
});
