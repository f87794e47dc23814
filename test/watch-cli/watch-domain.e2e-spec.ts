import { request } from 'undici';
import { DEFAULT_TEST_TOKEN } from '../support/auth';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor, within } from '../support/wait-for';
import {
  CLI_TRANSPORTS,
  exited,
  spawnCli,
  stopAll,
  type CliTransport,
  type Watcher,
} from './cli-process';

const PAYLOAD_BYTES = 24;
/** Long enough for every CLI to start (tsx) and be refused; a silent one is still running. */
const REFUSAL_TIMEOUT_MS = 30_000;

/**
 * `npm run watch -- <id> --domain payload`: the CLI follows a domain other than orders on
 * every transport, with the line the domain describes, and resumes after `--after`.
 */
describe('watch CLI, --domain', () => {
  let app: TestApp;
  const watchers: Watcher[] = [];

  beforeAll(async () => {
    app = await startTestApp({ STREAM_DOMAIN: 'payload' });
  });
  afterEach(() => stopAll(watchers));
  afterAll(() => app?.close());

  async function publish(streamId: string): Promise<void> {
    const res = await request(`${app.httpUrl}/v1/streams/${streamId}/payload`, {
      method: 'POST',
      headers: { ...app.authHeaders, 'content-type': 'application/json' },
      body: JSON.stringify({ bytes: PAYLOAD_BYTES }),
    });
    expect(res.statusCode).toBe(201);
    await res.body.dump();
  }

  function follow(transport: CliTransport, streamId: string, ...args: string[]): Watcher {
    const url = transport === 'grpc' ? app.grpcAddress : app.httpUrl;
    const w = spawnCli(transport, [
      streamId,
      '--domain',
      'payload',
      '--transport',
      transport,
      '--url',
      url,
      '--token',
      DEFAULT_TEST_TOKEN,
      ...args,
    ]);
    watchers.push(w);
    return w;
  }

  it('follows a payload stream on every transport: each seq once, in order', async () => {
    for (let i = 0; i < 3; i++) await publish('cli-p');
    const all = CLI_TRANSPORTS.map((t) => follow(t, 'cli-p'));
    await waitFor(
      () => all.every((w) => w.seqs().length === 3),
      'every watcher printed the retained payloads',
      20_000,
      50,
    );
    await publish('cli-p');
    await publish('cli-p');
    await waitFor(
      () => all.every((w) => w.seqs().at(-1) === 5),
      'every watcher printed the live payloads',
      10_000,
      50,
    );
    await stopAll(watchers);
    for (const w of all) {
      expect({ transport: w.transport, seqs: w.seqs() }).toEqual({
        transport: w.transport,
        seqs: [1, 2, 3, 4, 5],
      });
      const events = w.lines.filter((l) => /\s#\d+\s/.test(l));
      // The domain's kind and its own summary, not an order's status.
      for (const line of events) expect(line).toMatch(/#\d+\s+payload\s+[\d.]+ ms {2}24 bytes$/);
      expect(w.lines).toContainEqual(expect.stringContaining('connected to payload cli-p over'));
      expect(w.lines.some((l) => l.includes('finished'))).toBe(false);
      expect(w.child.exitCode).toBe(0);
    }
  }, 60_000);

  it('resumes after --after on every transport', async () => {
    for (let i = 0; i < 4; i++) await publish('cli-after');
    const all = CLI_TRANSPORTS.map((t) => follow(t, 'cli-after', '--after', '2'));
    await waitFor(
      () => all.every((w) => w.seqs().length === 2),
      'every watcher printed the payloads after seq 2',
      20_000,
      50,
    );
    await publish('cli-after');
    await waitFor(() => all.every((w) => w.seqs().at(-1) === 5), 'live payload printed', 10_000);
    await stopAll(watchers);
    for (const w of all) {
      expect({ transport: w.transport, seqs: w.seqs() }).toEqual({
        transport: w.transport,
        seqs: [3, 4, 5],
      });
      expect(w.lines[0]).toContain(`over ${w.transport}, after seq 2`);
    }
  }, 60_000);

  it('exits 2 for an unknown domain and names the known ones', async () => {
    const w = spawnCli('sse', ['cli-p', '--domain', 'parcel', '--url', app.httpUrl]);
    watchers.push(w);
    await exited(w);
    expect(w.child.exitCode).toBe(2);
    expect(w.lines[0]).toBe('stderr: --domain must be one of order, payload (got parcel)');
    expect(w.lines.some((l) => l.startsWith('stderr: usage: npm run watch'))).toBe(true);
  }, 30_000);

  it('exits 5 on every transport when the service streams another domain than --domain', async () => {
    await publish('cli-wrong');
    const all = CLI_TRANSPORTS.map((transport) => {
      const url = transport === 'grpc' ? app.grpcAddress : app.httpUrl;
      // No --domain: the default, the order domain, which this service does not stream.
      const w = spawnCli(transport, [
        'cli-wrong',
        '--transport',
        transport,
        '--url',
        url,
        '--token',
        DEFAULT_TEST_TOKEN,
        '--connect-timeout',
        '10',
      ]);
      watchers.push(w);
      return w;
    });
    // Bounded: a CLI the service leaves in silence would otherwise wait for ever.
    await within(Promise.all(all.map(exited)), REFUSAL_TIMEOUT_MS, undefined);
    for (const w of all) {
      const errors = w.lines.filter((l) => l.startsWith('stderr: '));
      expect({ transport: w.transport, exit: w.child.exitCode, errors }).toEqual({
        transport: w.transport,
        exit: 5,
        errors: [
          'stderr: cli-wrong: the service streams the payload domain, not order: watch with --domain payload',
        ],
      });
      expect(w.seqs()).toEqual([]);
    }
  }, 60_000);

  it.each(['sse', 'grpc'] as const)(
    '%s: exits 3 for a stream the service does not serve',
    async (transport) => {
      const w = follow(transport, 'cli-none');
      await exited(w);
      expect(w.child.exitCode).toBe(3);
      expect(w.lines.at(-1)).toMatch(/^stderr: cli-none: not_found: /);
    },
    30_000,
  );
});
