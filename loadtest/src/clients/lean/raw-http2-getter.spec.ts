import {
  constants as h2,
  createSecureServer,
  type Http2SecureServer,
  type Http2Session,
  type IncomingHttpHeaders,
  type ServerHttp2Stream,
} from 'node:http2';
import type { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';
import { Http2Getter, type HttpGetter } from '../http-stream';
import { RawHttp2Getter } from './raw-http2-getter';

/** What a GET reported: its status, its text, and how it ended. */
interface Outcome {
  status: number;
  text: string;
  end: string;
}

function get(getter: HttpGetter, path: string): Promise<Outcome> & { abort(): void } {
  let abort = (): void => undefined;
  const done = new Promise<Outcome>((resolve) => {
    const out: Outcome = { status: 0, text: '', end: '' };
    const stream = getter.get(
      path,
      { accept: 'application/json' },
      {
        onResponse: (status) => (out.status = status),
        onText: (t) => (out.text += t),
        onEnd: () => resolve({ ...out, end: 'end' }),
        onError: (code) => resolve({ ...out, end: `error ${code}` }),
      },
    );
    abort = () => stream.abort();
  });
  return Object.assign(done, { abort: () => abort() });
}

const until = async (ok: () => boolean): Promise<void> => {
  const deadline = Date.now() + 5_000;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};

/**
 * The raw HTTP/2 getter against Node's own HTTP/2 server, beside `node:http2`'s client
 * (Http2Getter): the same answers for every way a GET ends, connections shared the same
 * way, and what only a hand-framed client must get right (a character split across DATA
 * frames, a cancelled stream, GOAWAY, a dropped connection).
 */
describe('RawHttp2Getter', () => {
  let server: Http2SecureServer;
  let port = 0;
  const sessions = new Set<Http2Session>();
  const held: ServerHttp2Stream[] = [];
  const cancelled: number[] = [];
  const getters: HttpGetter[] = [];
  const made = <T extends HttpGetter>(g: T): T => {
    getters.push(g);
    return g;
  };

  beforeAll(async () => {
    const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
      keyType: 'ec',
      curve: 'P-256',
    });
    server = createSecureServer({ key: pems.private, cert: pems.cert });
    server.on('session', (s) => sessions.add(s));
    server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
      const path = String(headers[':path']);
      // A stream this server resets itself errors on its side too.
      stream.on('error', () => undefined);
      stream.on('close', () => {
        if (stream.rstCode === h2.NGHTTP2_CANCEL) cancelled.push(stream.id ?? -1);
      });
      if (path === '/text') {
        // "é" (0xc3 0xa9) cut between two DATA frames; the ask's accept header echoed.
        stream.respond({ ':status': 200, 'content-type': 'text/plain; charset=utf-8' });
        const body = Buffer.from(`caf\u00e9 ${String(headers.accept)}`, 'utf8');
        stream.write(body.subarray(0, 4));
        setTimeout(() => stream.end(body.subarray(4)), 10);
      } else if (path === '/empty') {
        stream.respond({ ':status': 204 }, { endStream: true });
      } else if (path === '/trailers') {
        stream.respond({ ':status': 200 }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'x-done': '1' }));
        stream.end('{"ok":true}');
      } else if (path === '/reset') {
        stream.respond({ ':status': 200 });
        stream.write('partial');
        setTimeout(() => stream.close(h2.NGHTTP2_INTERNAL_ERROR), 10);
      } else if (path.startsWith('/hold')) {
        held.push(stream);
      } else {
        stream.respond({ ':status': 404 }, { endStream: true });
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterEach(() => {
    for (const g of getters.splice(0)) g.close();
    held.splice(0);
    cancelled.splice(0);
  });
  afterAll(async () => {
    for (const s of sessions) s.destroy();
    await new Promise((r) => server.close(r));
  });

  it.each([
    ['a body over two DATA frames, a character cut between them', '/text'],
    ['an answer without a body', '/empty'],
    ['a body then trailers', '/trailers'],
    ['a stream the server resets after some data', '/reset'],
    ['an unknown path', '/nothing'],
  ])('reports %s as node:http2 does', async (_name, path) => {
    const node = await get(made(new Http2Getter('127.0.0.1', port)), path);
    const raw = await get(made(new RawHttp2Getter('127.0.0.1', port)), path);
    expect(raw).toEqual(node);
    if (path === '/text') expect(raw.text).toBe('caf\u00e9 application/json');
  });

  it('keeps at most streamsPerSession streams on a connection, as node:http2 sessions do', async () => {
    const getter = made(new RawHttp2Getter('127.0.0.1', port, 2));
    const before = sessions.size;
    const polls = [1, 2, 3, 4, 5].map((i) => get(getter, `/hold/${i}`));
    await until(() => held.length === 5);
    expect(sessions.size - before).toBe(3);
    for (const s of held) s.respond({ ':status': 200 }, { endStream: true });
    expect((await Promise.all(polls)).map((o) => o.end)).toEqual(Array(5).fill('end'));
  });

  it('cancels an aborted stream and reports nothing more of it', async () => {
    const getter = made(new RawHttp2Getter('127.0.0.1', port));
    let reported = false;
    const stream = getter.get(
      '/hold',
      {},
      {
        onResponse: () => (reported = true),
        onText: () => (reported = true),
        onEnd: () => (reported = true),
        onError: () => (reported = true),
      },
    );
    await until(() => held.length === 1);
    stream.abort();
    await until(() => cancelled.length === 1);
    expect(cancelled).toEqual([held[0].id]);
    expect(reported).toBe(false);
  });

  it('after a GOAWAY finishes the streams the server took and opens a new connection', async () => {
    const getter = made(new RawHttp2Getter('127.0.0.1', port));
    const first = get(getter, '/hold/1');
    await until(() => held.length === 1);
    const before = sessions.size;
    held[0].session?.goaway(h2.NGHTTP2_NO_ERROR, held[0].id);
    await new Promise((r) => setTimeout(r, 50));
    held[0].respond({ ':status': 200 });
    held[0].end('done');
    expect(await first).toEqual({ status: 200, text: 'done', end: 'end' });
    expect(await get(getter, '/text')).toMatchObject({ status: 200, end: 'end' });
    expect(sessions.size - before).toBe(1);
  });

  it('fails the open streams of a dropped connection, and the next GET connects again', async () => {
    const getter = made(new RawHttp2Getter('127.0.0.1', port));
    const polls = [get(getter, '/hold/1'), get(getter, '/hold/2')];
    await until(() => held.length === 2);
    held[0].session?.destroy();
    const ends = (await Promise.all(polls)).map((o) => o.end);
    expect(ends).toEqual([expect.stringMatching(/^error /), expect.stringMatching(/^error /)]);
    expect(await get(getter, '/empty')).toEqual({ status: 204, text: '', end: 'end' });
  });
});
