import { createServer, type AddressInfo, type Server } from 'node:net';

/**
 * `count` different free loopback ports. Every one is held until all are picked: on a busy
 * host the OS can hand out a port it has just seen closed, so picks one by one may repeat.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Server>((resolve, reject) => {
          const srv = createServer();
          srv.once('error', reject);
          srv.listen(0, '127.0.0.1', () => resolve(srv));
        }),
    ),
  );
  const ports = servers.map((srv) => (srv.address() as AddressInfo).port);
  await Promise.all(servers.map((srv) => new Promise((resolve) => srv.close(resolve))));
  return ports;
}

/** One free loopback port (for several, `freePorts`: picked one by one they may repeat). */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port;
}
