import { connect } from 'node:net';

/** @default 2_000 ms for the diagnostic TCP connect */
export const PROBE_TIMEOUT_MS = 2_000;

/** Host and port of a service URL (`http(s)://host:port`, or `host:port` for gRPC). */
export function hostPort(url: string): { host: string; port: number } {
  const u = new URL(url.includes('://') ? url : `http://${url}`);
  const port = u.port !== '' ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
  return { host: u.hostname.replace(/^\[(.*)\]$/, '$1'), port };
}

/**
 * Why a TCP connection to `url`'s host and port fails (`connect ECONNREFUSED
 * 127.0.0.1:3000`, `getaddrinfo ENOTFOUND ...`), or undefined when it opens: the client
 * libraries' errors often drop that cause ("fetch failed"), and it is what a person needs.
 */
export function tcpFailure(url: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<string | undefined> {
  let target: { host: string; port: number };
  try {
    target = hostPort(url);
  } catch (err) {
    return Promise.resolve(err instanceof Error ? err.message : String(err));
  }
  return new Promise((resolve) => {
    const socket = connect(target);
    const done = (cause: string | undefined) => {
      socket.destroy();
      resolve(cause);
    };
    socket.setTimeout(timeoutMs, () =>
      done(`no answer from ${target.host}:${target.port} in ${timeoutMs} ms`),
    );
    socket.once('connect', () => done(undefined));
    socket.once('error', (err) => done(err.message));
  });
}
