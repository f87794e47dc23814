import { OrderStatus } from '@app/order-domain/order-status';
import { DEFAULT_TEST_TOKEN } from '../support/auth';
import { stablePort } from '../support/stable-port';
import { restartOnSamePorts, startRestartableApp } from '../support/restart-app';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import {
  CLI_TRANSPORTS as TRANSPORTS,
  exited,
  spawnCli,
  stopAll,
  type CliTransport,
  type Watcher,
} from './cli-process';

const HISTORY = [OrderStatus.Created, OrderStatus.Paid, OrderStatus.Packed];

/** Starts the CLI for order cli-1 with `args`; `env` over the test's own environment. */
function spawnWatcher(
  transport: CliTransport,
  args: readonly string[],
  env: Record<string, string> = {},
): Watcher {
  return spawnCli(transport, ['cli-1', '--transport', transport, ...args], env);
}

function startWatcher(app: TestApp, transport: CliTransport, token = DEFAULT_TEST_TOKEN): Watcher {
  const url = transport === 'grpc' ? app.grpcAddress : app.httpUrl;
  return spawnWatcher(transport, ['--url', url, '--token', token]);
}

/** The CLI as the docs run it: no --url and no --token, both from the environment. */
function startDefaultWatcher(
  transport: CliTransport,
  env: Record<string, string>,
  ...args: string[]
): Watcher {
  return spawnWatcher(transport, args, {
    HTTP_PORT: '',
    GRPC_PORT: '',
    ORDER_STATUS_TOKEN: '',
    ...env,
  });
}

async function recreate(app: TestApp, ...statuses: OrderStatus[]): Promise<void> {
  for (const s of statuses) await app.publish('cli-1', s);
}

/**
 * The terminal client on every transport: prints the events, and when the server goes
 * away (SIGTERM-style shutdown with reconnect advice) and comes back on the same ports,
 * resumes by itself from the last seq it printed, with nothing printed twice.
 */
describe('watch CLI', () => {
  let app: TestApp | undefined;
  const watchers: Watcher[] = [];

  afterEach(async () => {
    await stopAll(watchers);
    await app?.close();
  });

  it('prints events on every transport and survives a server restart', async () => {
    // Short advice so the restart test stays quick; the CLI honours whatever it is told.
    const env = { SHUTDOWN_RECONNECT_JITTER_MS: '300', SHUTDOWN_DRAIN_MS: '2000' };
    const first = await startRestartableApp(env);
    app = first;
    await recreate(first, ...HISTORY);
    for (const t of TRANSPORTS) watchers.push(startWatcher(first, t));
    await waitFor(
      () => watchers.every((w) => w.seqs().length === 3),
      'every watcher printed the history',
      20_000,
      50,
    );
    await first.publish('cli-1', OrderStatus.Shipped);
    await waitFor(() => watchers.every((w) => w.seqs().at(-1) === 4), 'live event printed', 5_000);

    // Restart on the same ports; without Redis the order is re-created with its history.
    const second = await restartOnSamePorts(first, env, (a) => (app = a));
    await recreate(second, ...HISTORY, OrderStatus.Shipped);
    await second.publish('cli-1', OrderStatus.OutForDelivery);
    await waitFor(
      () => watchers.every((w) => w.seqs().at(-1) === 5),
      'every watcher resumed and printed seq 5',
      15_000,
      50,
    );
    await second.publish('cli-1', OrderStatus.Delivered);
    await Promise.all(watchers.map(exited));
    for (const w of watchers) {
      expect({ transport: w.transport, seqs: w.seqs() }).toEqual({
        transport: w.transport,
        seqs: [1, 2, 3, 4, 5, 6],
      });
      expect(w.lines.some((l) => l.includes('resumed after seq'))).toBe(true);
      // The order domain's summary: the new status, after the kind's wire name.
      expect(w.lines).toContainEqual(expect.stringMatching(/#4\s+status\s+[\d.]+ ms {2}shipped$/));
      expect(w.lines.at(-1)).toContain('order finished');
      expect(w.child.exitCode).toBe(0);
    }
  });

  it.each(['sse', 'grpc'] as const)(
    '%s: takes the address from HTTP_PORT / GRPC_PORT and the token from ORDER_STATUS_TOKEN',
    async (transport) => {
      app = await startTestApp();
      await recreate(app, ...HISTORY);
      const w = startDefaultWatcher(transport, {
        HTTP_PORT: String(app.ports.http),
        GRPC_PORT: String(app.ports.grpc),
        ORDER_STATUS_TOKEN: DEFAULT_TEST_TOKEN,
      });
      watchers.push(w);
      await waitFor(() => w.seqs().length === 3, 'the history printed', 20_000, 50);
    },
    30_000,
  );

  it.each(['sse', 'grpc'] as const)(
    '%s: names the URL and the cause, and exits 4 when it never connected',
    async (transport) => {
      const port = String(await stablePort());
      const w = startDefaultWatcher(
        transport,
        { HTTP_PORT: port, GRPC_PORT: port, ORDER_STATUS_TOKEN: DEFAULT_TEST_TOKEN },
        '--connect-timeout',
        '3',
      );
      watchers.push(w);
      // A CLI that retried for ever would never exit (the test's timeout).
      await exited(w);
      expect(w.child.exitCode).toBe(4);
      const address = transport === 'grpc' ? `127.0.0.1:${port}` : `http://127.0.0.1:${port}`;
      // The client library's error, once: the URL it tried and the cause, in its words.
      const failures = w.lines.filter((l) => /^[\d:.]+ {2}cannot connect/.test(l));
      expect(failures.length).toBeGreaterThan(0);
      for (const line of failures) {
        expect(line).toMatch(
          new RegExp(`cannot connect to ${address}(/\\S*)?: connection refused \\(ECONNREFUSED`),
        );
      }
      expect(w.lines.at(-1)).toMatch(
        new RegExp(
          `^stderr: cli-1: no connection to ${address} in 3 s \\(cannot connect to ${address}.*: connection refused \\(ECONNREFUSED`,
        ),
      );
    },
    30_000,
  );

  it('exits with code 3 and says why when the token is refused, without retrying', async () => {
    app = await startTestApp();
    await recreate(app, ...HISTORY);
    for (const t of TRANSPORTS) watchers.push(startWatcher(app, t, 'not-a-token'));
    // A CLI that retried a 401 forever would never exit (the test's timeout).
    await Promise.all(watchers.map(exited));
    for (const w of watchers) {
      expect({ transport: w.transport, code: w.child.exitCode }).toEqual({
        transport: w.transport,
        code: 3,
      });
      expect(w.lines.some((l) => l.startsWith('stderr: cli-1: unauthenticated:'))).toBe(true);
      expect(w.lines.filter((l) => l.includes('retrying in'))).toEqual([]);
    }
  }, 60_000);
});
