import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { request } from 'undici';
import {
  FREE_PORT_ATTEMPTS,
  portAccepts,
  startLocalStack,
  withFreePorts,
  type LocalStack,
} from '../../deploy/stack/local-stack';
import { STACK } from '../../deploy/stack/stack-settings';
import { testAuthEnv } from '../support/auth';

const nginxInstalled = (() => {
  try {
    execFileSync('nginx', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
if (!nginxInstalled) {
  process.stderr.write(
    'SKIPPED local stack port test: nginx is not installed (apt-get install -y nginx-light)\n',
  );
}

function holdAPort(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      resolve({ server, port: (server.address() as { port: number }).port });
    });
  });
}

/**
 * A free port can be taken by another process between the moment it is picked and the
 * moment the stack's process binds it (CI: nginx bound its HTTP port, could not bind its
 * gRPC port, and the stack was reported up). The start notices and starts again on
 * ports picked anew.
 */
(nginxInstalled ? describe : describe.skip)('local stack: a port taken before it is bound', () => {
  let stack: LocalStack | undefined;
  let held: { server: Server; port: number } | undefined;
  afterAll(async () => {
    await stack?.stop();
    held?.server.close();
  });

  it('starts again on other ports, and nginx accepts on every port it was given', async () => {
    held = await holdAPort();
    const taken = held.port;
    let picks = 0;
    const lines: string[] = [];
    stack = await startLocalStack({
      pickPorts: async () => {
        picks++;
        const s = await withFreePorts(STACK);
        return picks === 1 ? { ...s, nginx: { ...s.nginx, grpcPort: taken } } : s;
      },
      env: { ...testAuthEnv(), LOG_LEVEL: 'warn', SIMULATOR_ENABLED: 'false' },
      log: (source, line) => lines.push(`[${source}] ${line}`),
    });
    // At least the retry the held port forces; another process can take a fresh port too
    // (CI: three picks), which the stack answers the same way, within its bound.
    expect(picks).toBeGreaterThanOrEqual(2);
    expect(picks).toBeLessThanOrEqual(FREE_PORT_ATTEMPTS);
    const retry = lines.find((l) => l.startsWith('[stack]'));
    // nginx, on the port held above; or an instance first, when another process took one of
    // its fresh ports meanwhile (a CI run: the same race, met earlier in the start).
    expect(retry).toMatch(
      /a port was taken: \[(nginx\] .*Address already in use|app\d\] .*EADDRINUSE).*other ports/,
    );
    const { httpPort, httpsPort, grpcPort } = stack.settings.nginx;
    expect(grpcPort).not.toBe(taken);
    expect(await Promise.all([httpPort, httpsPort, grpcPort].map(portAccepts))).toEqual([
      true,
      true,
      true,
    ]);
    // nginx, not another process, answers there: it routes to an instance.
    const res = await request(`http://127.0.0.1:${httpPort}/health/live`);
    await res.body.dump();
    expect(res.statusCode).toBe(200);
  }, 120_000);
});

describe('local stack: settings that give two listeners one port', () => {
  // Picked one by one, two free ports can be the same on a busy host: nginx then merged
  // its plain HTTP and its gRPC (TLS) listener into one TLS port, and plain HTTP got 400.
  it('are refused before anything starts, naming the port and both listeners', async () => {
    const s = await withFreePorts(STACK);
    const started = startLocalStack({
      pickPorts: async () => ({ ...s, nginx: { ...s.nginx, grpcPort: s.nginx.httpPort } }),
      env: { ...testAuthEnv(), LOG_LEVEL: 'warn', SIMULATOR_ENABLED: 'false' },
      log: () => undefined,
    });
    try {
      await expect(started).rejects.toThrow(
        `port ${s.nginx.httpPort} is given to both nginx httpPort and nginx grpcPort`,
      );
    } finally {
      await started.then((stack) => stack.stop()).catch(() => undefined);
    }
  }, 120_000);

  it('are never what withFreePorts picks: every port of a stack differs', async () => {
    const s = await withFreePorts(STACK);
    const ports = [s.redisPort, ...Object.values(s.nginx)];
    for (const i of s.instances) ports.push(i.httpPort, i.grpcPort);
    expect(new Set(ports).size).toBe(4 + 2 * STACK.instances.length);
  });
});
