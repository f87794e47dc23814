import { existsSync, readdirSync, readFileSync } from 'node:fs';
import type { RequestListener } from 'node:http';
import { join } from 'node:path';
import { OrderStatus } from '@app/order-domain/order-status';
import { launchBrowser } from '../browser/browser';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { range, shippedOrder, track } from './client-harness';
import {
  CLIENT_DIR,
  createConsumer,
  jsBlocks,
  PACKAGE_NAME,
  runNode,
  type Consumer,
  type NodeRun,
} from './package-consumer';
import {
  completedOnEveryTransport,
  followFromPage,
  moduleImportPage,
  openTeamPage,
  startOrigin,
  type Origin,
} from './team-page';

const GRPC_PEERS = ['@grpc/grpc-js', '@grpc/proto-loader'];

/** Every file of the installed package's dist/, relative to it. */
function distFiles(c: Consumer): string[] {
  return readdirSync(join(c.installed, 'dist'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(c.installed.length + 1));
}

/** Seqs the README's examples print (`<seq> <what>` lines), and their `end <reason>` line. */
function printed(r: NodeRun): { seqs: number[]; end: string | undefined } {
  return {
    seqs: r.stdout.flatMap((l) => /^(\d+) /.exec(l)?.slice(1, 2).map(Number) ?? []),
    end: r.stdout.find((l) => l.startsWith('end ')),
  };
}

/**
 * The team's page: an import map resolves the package as a bundler would for browsers
 * (its `browser` export) and socket.io-client to its ES module build, both served from
 * the consumer's node_modules.
 */
function consumerSite(c: Consumer): RequestListener {
  const pkg = JSON.parse(readFileSync(join(c.installed, 'package.json'), 'utf8')) as {
    exports: { '.': { browser: string } };
  };
  const imports = {
    [PACKAGE_NAME]: `/node_modules/${PACKAGE_NAME}/${pkg.exports['.'].browser.slice(2)}`,
    'socket.io-client': '/node_modules/socket.io-client/dist/socket.io.esm.min.js',
  };
  const page = moduleImportPage(
    PACKAGE_NAME,
    `<script type="importmap">${JSON.stringify({ imports })}</script>`,
  );
  return (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(page);
      return;
    }
    const file = join(c.dir, path);
    if (!path.startsWith('/node_modules/') || !file.startsWith(c.dir) || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/javascript' });
    res.end(readFileSync(file));
  };
}

/**
 * libs/client as a team gets it: packed, installed from the tarball into a folder
 * outside the repository, then used from Node (ESM) and from a page of another origin in
 * Chromium, and type-checked against its `.d.mts`, with the real service on port 0.
 */
describe(`${PACKAGE_NAME} installed from its tarball`, () => {
  let consumer: Consumer;

  beforeAll(async () => {
    consumer = await createConsumer();
    consumer.link('socket.io-client');
    consumer.link('rxjs');
  }, 180_000);
  afterAll(() => {
    consumer?.remove();
  });

  it('is built by npm pack: ESM per platform, one .d.mts, nothing of the repository left', () => {
    const packed = consumer.pack.files.map((f) => f.path).sort();
    expect(packed).toEqual(
      expect.arrayContaining([
        'README.md',
        'dist/browser.mjs',
        'dist/index.d.mts',
        'dist/node.mjs',
        'dist/rxjs.d.mts',
        'dist/rxjs.mjs',
      ]),
    );
    expect(
      packed.filter((p) => !p.startsWith('dist/') && !/^(README\.md|package\.json)$/.test(p)),
    ).toEqual([]);
    const pkg = JSON.parse(readFileSync(join(consumer.installed, 'package.json'), 'utf8')) as {
      exports: Record<string, Record<string, string>>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
    };
    expect(Object.keys(pkg.exports['.'])).toEqual(['types', 'node', 'browser', 'default']);
    expect(Object.keys(pkg.exports['./rxjs'])).toEqual(['types', 'default']);
    for (const peer of [...GRPC_PEERS, 'rxjs']) {
      expect(pkg.peerDependenciesMeta[peer]?.optional).toBe(true);
    }
    for (const file of distFiles(consumer)) {
      const text = readFileSync(join(consumer.installed, file), 'utf8');
      // The tsconfig aliases are resolved and libs/contracts and libs/order-domain are bundled in.
      expect({ file, alias: text.includes('@app/') }).toEqual({ file, alias: false });
    }
    const browser = readFileSync(join(consumer.installed, 'dist', 'browser.mjs'), 'utf8');
    expect(browser).not.toMatch(/@grpc\/|from ["']node:|__dirname|require\(/);
    // gRPC only in a chunk of its own, imported when a watch asks for it.
    const node = readFileSync(join(consumer.installed, 'dist', 'node.mjs'), 'utf8');
    expect(node).not.toMatch(/^import .* from ["']@grpc\//m);
  });

  it('loads on Node without the gRPC peers; asking for gRPC then throws naming them', async () => {
    const script = consumer.write(
      'no-grpc.mjs',
      [
        `import { watchOrder } from '${PACKAGE_NAME}';`,
        'try {',
        "  watchOrder('order-1', { transport: 'grpc', baseUrl: '127.0.0.1:1' });",
        "  console.log('no error');",
        '} catch (err) {',
        "  console.log(err.name + ': ' + err.message);",
        '}',
      ].join('\n'),
    );
    const r = runNode(consumer.dir, script, {});
    expect(await r.exited).toBe(0);
    expect(r.stdout).toEqual([
      "TypeError: transport 'grpc' needs @grpc/grpc-js and @grpc/proto-loader: npm install @grpc/grpc-js @grpc/proto-loader",
    ]);
  });

  describe('against the service', () => {
    let app: TestApp;
    /** The team's site: another origin serving the consumer's node_modules to a page. */
    let site: Origin;
    beforeAll(async () => {
      for (const peer of GRPC_PEERS) consumer.link(peer);
      site = await startOrigin(consumerSite(consumer));
      app = await startTestApp({ HTTP_CORS_ORIGINS: site.origin, WS_CORS_ORIGINS: site.origin });
    });
    afterAll(async () => {
      await app?.close();
      site?.close();
    });

    it("runs its `browser` build in Chromium, on the team's page (another origin), through an import map", async () => {
      const browser = await launchBrowser();
      try {
        const [page, loaded] = await openTeamPage(browser, `${site.origin}/`);
        expect(loaded).toBe(true);
        expect(await followFromPage(page, app, 'pkg-browser-1')).toEqual(
          completedOnEveryTransport(),
        );
      } finally {
        await browser.close();
      }
    }, 60_000);

    it("runs the README's example for every transport as written, live events included", async () => {
      const examples = jsBlocks(join(CLIENT_DIR, 'README.md')).filter((b) =>
        b.includes(`from '${PACKAGE_NAME}'`),
      );
      const transports = examples.map((b) => /transport: '(\w+)'/.exec(b)?.[1]);
      // The sixth is the RxJS face (over SSE), the seventh a client shared by watches.
      expect(transports).toEqual(['sse', 'ws', 'websocket', 'longpoll', 'grpc', 'sse', 'ws']);
      await shippedOrder(app, 'order-1');
      const env = {
        ORDER_STATUS_URL: app.httpUrl,
        ORDER_STATUS_GRPC: app.grpcAddress,
        TOKEN: app.defaultToken,
      };
      const runs = examples.map((code, i) =>
        runNode(consumer.dir, consumer.write(`example-${i}-${transports[i]}.mjs`, code), env),
      );
      try {
        // History first (seqs 1-4), then what is published while the examples follow.
        await waitFor(
          () => runs.every((r) => printed(r).seqs.includes(4)),
          'history printed',
          20_000,
        );
        const five = await track(app, 'order-1');
        const delivered = await app.publish('order-1', OrderStatus.Delivered);
        const codes = await Promise.all(runs.map((r) => r.exited));
        const results = runs.map((r, i) => ({
          transport: transports[i],
          code: codes[i],
          ...printed(r),
        }));
        const events = [1, 2, 3, 4, delivered.seq];
        expect(results).toEqual([
          { transport: 'sse', code: 0, seqs: range(1, delivered.seq), end: 'end completed' },
          {
            transport: 'ws',
            code: 0,
            seqs: range(1, delivered.seq),
            end: expect.stringMatching(/^end completed /),
          },
          { transport: 'websocket', code: 0, seqs: events, end: 'end completed' },
          { transport: 'longpoll', code: 0, seqs: events, end: 'end completed' },
          { transport: 'grpc', code: 0, seqs: events, end: 'end completed ' },
          { transport: 'sse', code: 0, seqs: events, end: 'end completed' },
          { transport: 'ws', code: 0, seqs: events, end: 'end completed' },
        ]);
        expect(five).toBe(5);
      } finally {
        for (const r of runs) r.child.kill();
      }
    }, 60_000);
  });

  it('type-checks a consumer against its types (Node: nodenext; browser: bundler + DOM)', async () => {
    consumer.link('@types/node');
    consumer.write(
      'consumer.ts',
      [
        'import {',
        '  watchOrder,',
        '  DEFAULT_MAX_BUFFERED_ITEMS,',
        '  type ConnectionEvent,',
        '  type OrderStatusChanged,',
        '  type OrderWatch,',
        '  type WatchError,',
        '  createClient,',
        '  type OrderClient,',
        `} from '${PACKAGE_NAME}';`,
        `import { toObservable, type WatchValue } from '${PACKAGE_NAME}/rxjs';`,
        "import type { Observable } from 'rxjs';",
        '',
        'const statusOf = (e: OrderStatusChanged): string => e.status;',
        '',
        'export async function follow(baseUrl: string, token: string): Promise<number> {',
        '  const onConnection = (e: ConnectionEvent): void => console.log(e.type);',
        '  const maxBufferedItems = DEFAULT_MAX_BUFFERED_ITEMS;',
        "  const watch: OrderWatch = watchOrder('order-1', {",
        "    transport: 'sse',",
        '    baseUrl,',
        '    token,',
        '    maxBufferedItems,',
        '    onConnection,',
        '  });',
        '  for await (const item of watch) {',
        "    if (item.kind === 'event') console.log(statusOf(item.event));",
        "    if (item.kind === 'end' && item.reason === 'error') {",
        '      const err: WatchError = item.error;',
        '      return err.status ?? -1;',
        '    }',
        '    // @ts-expect-error: only an `event` item has an event',
        '    console.log(item.event);',
        '  }',
        '  // @ts-expect-error: a transport the library does not have',
        "  watchOrder('order-1', { transport: 'pigeon', baseUrl });",
        "  const client: OrderClient = createClient({ transport: 'ws', baseUrl, token });",
        "  client.watch('order-3', { after: 2, onConnection });",
        "  // @ts-expect-error: the transport is the client's, not a watch's",
        "  client.watch('order-4', { transport: 'sse' });",
        "  const items: Observable<WatchValue> = toObservable(watchOrder('order-2', { transport: 'ws', baseUrl }));",
        '  // @ts-expect-error: the end is not a value, it completes or errors the Observable',
        "  items.subscribe((i) => i.kind === 'end');",
        '  return (await watch.done).lastSeq;',
        '}',
        '',
      ].join('\n'),
    );
    // Our .d.mts is checked as a file of its own (skipLibCheck off, lib files skipped) once,
    // in the browser project, which loads no other declarations.
    const strict = { strict: true, noEmit: true, skipDefaultLibCheck: true, target: 'es2022' };
    consumer.write(
      'tsconfig.json',
      JSON.stringify({
        compilerOptions: {
          ...strict,
          skipLibCheck: true,
          module: 'nodenext',
          lib: ['es2023'],
          types: ['node'],
        },
        files: ['consumer.ts'],
      }),
    );
    consumer.write(
      'tsconfig.browser.json',
      JSON.stringify({
        compilerOptions: {
          ...strict,
          module: 'esnext',
          moduleResolution: 'bundler',
          customConditions: ['browser'],
          lib: ['es2023', 'dom'],
          types: [],
          skipLibCheck: false,
        },
        files: ['consumer.ts'],
      }),
    );
    const [node, browser] = await Promise.all([
      consumer.typecheck('tsconfig.json'),
      consumer.typecheck('tsconfig.browser.json'),
    ]);
    expect(node).toEqual({ code: 0, output: '' });
    expect(browser).toEqual({ code: 0, output: '' });
  }, 60_000);
});
