import 'reflect-metadata';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describeConfig } from '../../apps/order-status/src/config/app-config';
import { markdownAnchors, markdownLinks } from './markdown-links';

const ROOT = resolve(__dirname, '../..');

/** The project's documents: the READMEs a newcomer starts from and everything in docs/. */
function documents(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f));
  const readmes = [
    'README.md',
    'loadtest/README.md',
    'libs/client/README.md',
    'apps/order-status/src/transports/ws/README.md',
    'loadtest/results/README.md',
  ];
  return [...readmes.filter((f) => existsSync(join(ROOT, f))), ...docs];
}

/** Every relative link that does not land on an existing file, or on an anchor it has. */
function brokenLinks(file: string): string[] {
  const broken: string[] = [];
  const source = readFileSync(join(ROOT, file), 'utf8');
  for (const { line, target } of markdownLinks(source)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: ...
    const [path, anchor] = target.split('#', 2);
    const resolved = path === '' ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), path);
    const where = `${file}:${line} ${target}`;
    if (!resolved.startsWith(ROOT) || !existsSync(resolved)) {
      broken.push(`${where}: no such file`);
      continue;
    }
    if (anchor === undefined || anchor === '') continue;
    if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) {
      broken.push(
        `${where}: an anchor into ${relative(ROOT, resolved)}, which is no markdown file`,
      );
    } else if (!markdownAnchors(readFileSync(resolved, 'utf8')).has(anchor)) {
      broken.push(`${where}: ${relative(ROOT, resolved)} has no heading #${anchor}`);
    }
  }
  return broken;
}

describe('documents', () => {
  it.each(documents())('%s: every relative link resolves, anchors included', (file) => {
    expect(brokenLinks(file)).toEqual([]);
  });

  it('docs/README.md links every document in docs/', () => {
    const index = readFileSync(join(ROOT, 'docs/README.md'), 'utf8');
    const linked = new Set(markdownLinks(index).map((l) => l.target.split('#')[0]));
    const files = readdirSync(join(ROOT, 'docs')).filter((f) => f !== 'README.md');
    expect(files.filter((f) => !linked.has(f))).toEqual([]);
  });

  it("the README's quick start gives the test command .ci/run runs, and a start command", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const quickStart = /## Quick start\n[\s\S]*?```\w*\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const commands = quickStart
      .split('\n')
      .map((l) => l.replace(/#.*$/, '').trim())
      .filter((l) => l !== '');
    const ci = readFileSync(join(ROOT, '.ci/run'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => /^npm (ci|test|start)\b/.test(l));
    // .ci/run installs with npm ci and then runs the README's test command.
    expect(ci.at(-1)).toBe('npm test');
    expect(ci.some((l) => l.startsWith('npm ci'))).toBe(true);
    expect(commands).toContain('npm ci && npm test');
    expect(commands).toContain('npm ci && npm start');
  });
});

/** Names with the prefix of a configuration section, e.g. `REDIS_HISTORY_SIZE`. */
const CONFIG_LIKE =
  /\b((?:HTTPS?|HTTP2|GRPC|WS|SSE|LONG_POLL|BUS|STREAM|SIMULATOR|AUTH|LIMIT|REDIS|SHUTDOWN|TLS|LOG|IDEMPOTENCY|ADMIN|DOCS)_[A-Z0-9_]+)\b/g;

/** What the demo stack's files read (`${NAME}` in compose, `ARG NAME` in the Dockerfile). */
function stackVariables(): string[] {
  const compose = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  return [
    ...[...compose.matchAll(/\$\{([A-Z0-9_]+)/g)].map((m) => m[1]),
    ...[...dockerfile.matchAll(/^ARG ([A-Z0-9_]+)/gm)].map((m) => m[1]),
  ];
}

describe('configuration variables in the documents', () => {
  // The service's settings, and the stack's own (image names, published ports).
  const known = new Set([...describeConfig().map((v) => v.name), ...stackVariables()]);

  it.each(documents())('%s names only variables the service reads', (file) => {
    // A variable renamed or removed in the code leaves prose that tells readers to set
    // something that does nothing.
    const source = readFileSync(join(ROOT, file), 'utf8');
    const unknown = [...source.matchAll(CONFIG_LIKE)].map((m) => m[1]).filter((n) => !known.has(n));
    expect([...new Set(unknown)]).toEqual([]);
  });
});

describe('markdown link reader', () => {
  it('finds inline and reference links outside code, and GitHub anchors', () => {
    const md = [
      '# Scale-out: Redis and the demo stack',
      'See [a](docs/a.md#x) and `[b](not-a-link)`.',
      '```',
      '[e](in-code.md)',
      '```',
      '[ref]: ./f.md',
      '## Scale-out: Redis and the demo stack',
    ].join('\n');
    expect(markdownLinks(md).map((l) => l.target)).toEqual(['docs/a.md#x', './f.md']);
    expect([...markdownAnchors(md)]).toEqual([
      'scale-out-redis-and-the-demo-stack',
      'scale-out-redis-and-the-demo-stack-1',
    ]);
  });
});
