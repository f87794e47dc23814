import { connect, Socket } from 'node:net';
import { startTestApp, type TestApp } from '../support/test-app';
import { once, waitFor } from '../support/wait-for';

interface TcpHandle {
  setNoDelay(enable: boolean): number;
}

/**
 * Every listener sends small writes at once (TCP_NODELAY on the accepted socket). Without
 * it the kernel may hold a small write while an earlier one is unacknowledged, until the
 * client's delayed acknowledgement (up to 40 ms on Linux, longer on real networks' round
 * trips): an SSE event or a long-poll answer written right after another. Node's HTTP/1.1
 * server sets the option on the sockets it accepts; its HTTP/2 secure server, which serves
 * the HTTPS port (HTTP/2, and HTTP/1.1 over TLS), does not unless asked.
 *
 * Node sets it at accept, on the socket's native handle, before any JavaScript sees the
 * socket; the handle class's setNoDelay is watched for the call.
 */
describe('TCP_NODELAY on every listener', () => {
  let app: TestApp;
  let restore: () => void;
  const enabled: object[] = [];
  const clients: Socket[] = [];

  beforeAll(async () => {
    app = await startTestApp();
    // The native TCP handle class, from a client socket's handle (created at connect; to
    // a port nothing listens on, so no server accepts it later and gets counted).
    const probe = connect(1, '127.0.0.1');
    probe.on('error', () => undefined);
    const proto = Object.getPrototypeOf((probe as unknown as { _handle: TcpHandle })._handle) as {
      setNoDelay: TcpHandle['setNoDelay'];
    };
    probe.destroy();
    const original = proto.setNoDelay;
    proto.setNoDelay = function (this: object, enable: boolean) {
      if (enable) enabled.push(this);
      return original.call(this, enable);
    };
    restore = () => (proto.setNoDelay = original);
  });
  afterAll(async () => {
    restore();
    for (const c of clients) c.destroy();
    await app.close();
  });

  it.each([
    ['the HTTPS port (HTTP/2 and HTTP/1.1 over TLS)', 'https'],
    ['the plain HTTP port', 'http'],
    ['the gRPC port', 'grpc'],
  ] as const)('sets it on every socket accepted on %s', async (_name, port) => {
    const before = enabled.length;
    // A plain TCP client, which does not ask for the option itself: any handle that gets
    // it now is the server's side of this connection.
    const client = connect(app.ports[port], '127.0.0.1');
    clients.push(client);
    await once(client, 'connect');
    await waitFor(() => enabled.length > before, `TCP_NODELAY on the ${port} port's socket`, 2_000);
  });
});
