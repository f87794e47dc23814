import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { request } from 'undici';
import type { StreamDomain } from '@app/contracts';
import type { OrderEvent, OrderSnapshot } from '@app/order-domain';
import { watchOrder, type TransportName, type WatchItem } from '@app/client/node';
import { spawnService, type ServiceProcess } from '../ops/service-process';
import { bearer } from '../support/auth';
import { RedisServer } from '../support/redis-server';

const run = promisify(execFile);
const ROOT = resolve(__dirname, '../..');
const NAME = 'ticket';
/** What docs/adapting.md says `npm run domain:new` touches, checked against what it did. */
const GUIDE_COUNT = /`npm run domain:new -- <name>` writes and registers (\w+) files/;
const NUMBERS: Readonly<Record<string, number>> = { five: 5, six: 6, seven: 7, eight: 8 };
const TRANSPORTS: readonly TransportName[] = ['sse', 'ws', 'websocket', 'longpoll'];

/** The repository's files (tracked, and new ones not ignored) as they are in the working tree. */
async function scratchCopy(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'new-domain-'));
  const { stdout } = await run(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    { cwd: ROOT, maxBuffer: 1 << 24 },
  );
  for (const file of stdout.split('\0').filter(Boolean)) {
    await cp(join(ROOT, file), join(dir, file), { recursive: true }).catch((e: unknown) => {
      // A file deleted in the working tree but not yet in the index is not part of it.
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    });
  }
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

/** A tool of the project's (`node_modules/.bin`) run in `cwd` on this Node. */
async function tool(cwd: string, name: string, args: string[]): Promise<string> {
  const bin = join(cwd, 'node_modules', '.bin', name);
  try {
    const { stdout } = await run(process.execPath, [bin, ...args], { cwd, maxBuffer: 1 << 24 });
    return stdout;
  } catch (e) {
    const { message, stdout, stderr } = e as Error & { stdout?: string; stderr?: string };
    throw new Error(
      `${name} ${args.join(' ')} failed: ${message}\n${stdout ?? ''}\n${stderr ?? ''}`,
    );
  }
}

/**
 * docs/adapting.md's path for a team's own domain, followed on a scratch copy of the
 * repository: the generator adds a domain with a life cycle, the copy type-checks and
 * builds, and the built service carries the new domain on both stores and every JSON
 * transport, read by the client library through the generated descriptor and by the watch
 * CLI through the domain's name.
 */
describe('a new domain, added as docs/adapting.md says', () => {
  let scratch: string;
  let domain: StreamDomain<OrderEvent, OrderSnapshot>;
  let redis: RedisServer;
  const services: ServiceProcess[] = [];

  beforeAll(async () => {
    scratch = await scratchCopy();
    redis = await RedisServer.launch();
  }, 60_000);
  afterAll(async () => {
    for (const s of services) s.kill();
    await Promise.all(services.map((s) => s.exited));
    await redis?.shutdown();
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  });

  it('is written and registered in the files the guide counts, and type-checks', async () => {
    const out = await tool(scratch, 'tsx', [
      'apps/order-status/src/domains/new-domain-cli.ts',
      NAME,
    ]);
    const touched = out
      .split('\n')
      .filter((l) => l.startsWith('  '))
      .map((l) => l.trim());
    const { stdout: status } = await run('git', ['status', '--porcelain'], {
      cwd: ROOT,
    }).catch(() => ({ stdout: '' }));
    expect(status).not.toContain(NAME);
    const guide = GUIDE_COUNT.exec(await readFile(join(ROOT, 'docs/adapting.md'), 'utf8'));
    expect(guide).not.toBeNull();
    expect(touched).toHaveLength(NUMBERS[guide?.[1] ?? ''] ?? -1);
    // The app and every library it imports, the new domain included (specs and the load
    // test are not a domain's concern).
    await writeFile(
      join(scratch, 'tsconfig.new-domain.json'),
      JSON.stringify({
        extends: './tsconfig.json',
        include: ['apps/order-status/src/**/*.ts', `libs/${NAME}-domain/**/*.ts`],
        exclude: ['**/*.spec.ts', '**/testing/**'],
      }),
    );
    await tool(scratch, 'tsc', ['--noEmit', '-p', 'tsconfig.new-domain.json']);
    await tool(scratch, 'nest', ['build', 'order-status']);
    // The generated descriptor, as the client library takes it.
    const generated = (await import(
      join(scratch, `libs/${NAME}-domain/src/${NAME}-domain.ts`)
    )) as Record<string, unknown>;
    domain = generated[`${NAME.toUpperCase()}_DOMAIN`] as StreamDomain<OrderEvent, OrderSnapshot>;
    expect(domain.name).toBe(NAME);
  }, 300_000);

  describe.each(['in-memory', 'redis'] as const)('served live (%s)', (store) => {
    let service: ServiceProcess;

    beforeAll(async () => {
      expect(domain).toBeDefined();
      service = await spawnService(
        { STREAM_DOMAIN: NAME, ...(store === 'redis' ? { REDIS_URL: redis.url } : {}) },
        join(scratch, 'dist/apps/order-status/main.js'),
      );
      services.push(service);
    }, 90_000);

    async function publish(orderId: string, body: unknown): Promise<number> {
      const res = await request(`${service.httpUrl}/v1/streams/${orderId}/${NAME}`, {
        method: 'POST',
        headers: { ...bearer(), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      await res.body.dump();
      return res.statusCode;
    }

    it('validates and applies its life cycle on publish', async () => {
      const id = `${store}-rules`;
      expect(await publish(id, { phase: 'closed', note: 'x' })).toBe(404);
      expect(await publish(id, { phase: 'done', note: 'x' })).toBe(400);
      expect(await publish(id, { phase: 'open', note: 'x'.repeat(501) })).toBe(400);
      expect(await publish(id, { phase: 'open', note: 'opened' })).toBe(201);
      expect(await publish(id, { phase: 'closed', note: 'closed' })).toBe(201);
      expect(await publish(id, { phase: 'open', note: 'again' })).toBe(409);
    });

    it('is followed by the watch CLI, which finds it by its name alone', async () => {
      const id = `${store}-cli`;
      expect(await publish(id, { phase: 'open', note: 'one' })).toBe(201);
      expect(await publish(id, { phase: 'closed', note: 'two' })).toBe(201);
      const token = bearer().authorization.slice('Bearer '.length);
      // The copy's own CLI, not edited: it exits 0 only when the stream completed.
      const out = await tool(scratch, 'tsx', [
        'apps/watch-cli/src/cli.ts',
        id,
        '--domain',
        NAME,
        '--url',
        service.httpUrl,
        '--token',
        token,
      ]);
      const lines = out.trim().split('\n');
      expect(lines.filter((l) => /\s#\d+\s/.test(l))).toEqual([
        expect.stringMatching(new RegExp(`#1\\s+${NAME}\\s+[\\d.]+ ms {2}open: one$`)),
        expect.stringMatching(new RegExp(`#2\\s+${NAME}\\s+[\\d.]+ ms {2}closed: two$`)),
      ]);
      expect(lines.at(-1)).toMatch(new RegExp(`${NAME} finished \\(seq 2\\)$`));
    }, 30_000);

    it.each(TRANSPORTS)(
      'is followed over %s until its terminal phase ends the stream',
      async (transport) => {
        const id = `${store}-${transport}`;
        expect(await publish(id, { phase: 'open', note: 'one' })).toBe(201);
        expect(await publish(id, { phase: 'open', note: 'two' })).toBe(201);
        const watch = watchOrder(id, {
          transport,
          baseUrl: service.httpUrl,
          token: bearer().authorization.slice('Bearer '.length),
          domain,
          longPollWaitS: 5,
          after: 1,
        });
        const items: WatchItem[] = [];
        const reading = (async () => {
          for await (const item of watch) items.push(item);
        })();
        expect(await publish(id, { phase: 'closed', note: 'three' })).toBe(201);
        const end = await watch.done;
        await reading;
        const notes = items.flatMap((i) =>
          i.kind === 'event' ? [(i.event as unknown as { seq: number; note: string }).note] : [],
        );
        expect({ notes, end }).toEqual({
          notes: ['two', 'three'],
          end: { kind: 'end', reason: 'completed', lastSeq: 3 },
        });
      },
      30_000,
    );
  });
});
