import { ErrorCode } from '@app/contracts/gateway-error';
import { OrderStatus } from '@app/order-domain/order-status';
import type { StreamItem } from '@app/order-domain/order-events';
import type { ConnectionEnd, ConnectRequest, ConnectorFactory } from './transports/connector';
import type { ConnectionEvent, WatchItem, WatchOptions } from './types';
import { WatchError } from './watch-error';
import { createWatch } from './watch-order';

type Script = (req: ConnectRequest, attempt: number) => Promise<ConnectionEnd>;

const ev = (seq: number): StreamItem => ({
  kind: 'event',
  event: { orderId: 'o', seq, status: OrderStatus.Paid, publishedAtUs: 0 },
});

/** A watch over a scripted transport; what it yields and reports. */
async function run(script: Script, options: Partial<WatchOptions> = {}) {
  let attempt = 0;
  const afters: number[] = [];
  const factory: ConnectorFactory = () => ({
    connect: (req) => {
      afters.push(req.afterSeq);
      return script(req, attempt++);
    },
    close: () => undefined,
  });
  const events: ConnectionEvent[] = [];
  const watch = createWatch(
    'o',
    {
      transport: 'sse',
      baseUrl: 'http://x',
      backoff: { baseMs: 1, maxMs: 2 },
      onConnection: (e) => events.push(e),
      ...options,
    },
    { sse: factory },
  );
  const items: WatchItem[] = [];
  for await (const item of watch) items.push(item);
  return { items, events, afters, stats: watch.stats };
}

describe('watch loop', () => {
  it('resumes after the cursor on every attempt, drops duplicates, reports gaps', async () => {
    const r = await run(async (req, attempt) => {
      req.opened();
      if (attempt === 0) [1, 2].forEach((s) => req.item(ev(s)));
      if (attempt === 1) [2, 3, 5].forEach((s) => req.item(ev(s)));
      if (attempt < 2) throw new Error('dropped');
      return { reason: 'completed' };
    });
    expect(r.afters).toEqual([0, 2, 5]);
    expect(r.items.map((i) => i.kind)).toEqual(['event', 'event', 'event', 'gap', 'event', 'end']);
    expect(r.stats).toMatchObject({ duplicates: 1, lost: 1, reconnects: 2, resumes: 2 });
  });

  it("waits exactly the server's advice after an end that carries it", async () => {
    const r = await run(async (req, attempt) => {
      req.opened();
      return attempt === 0 ? { reason: 'shutdown', retryAfterMs: 37 } : { reason: 'completed' };
    });
    expect(r.events).toContainEqual({
      type: 'retrying',
      delayMs: 37,
      reason: 'shutdown',
      advisedMs: 37,
    });
  });

  it('asks getToken() once after a refusal, then ends with the error', async () => {
    let asked = 0;
    const r = await run(
      async () => {
        throw new WatchError(ErrorCode.Unauthenticated, 'bad token', undefined, 401);
      },
      { token: 'a', getToken: () => `b${++asked}` },
    );
    expect(asked).toBe(1);
    expect(r.afters).toHaveLength(2);
    expect(r.items.at(-1)).toMatchObject({ kind: 'end', reason: 'error', error: { status: 401 } });
  });

  it('treats a throwing getToken() as transient: backoff, then asked again', async () => {
    let asked = 0;
    const getToken = () => {
      if (++asked < 3) throw new Error('token service down');
      return 'fresh';
    };
    // Without a first token, and after a refusal.
    for (const token of [undefined, 'stale']) {
      asked = 0;
      const tokens: (string | undefined)[] = [];
      const r = await run(
        async (req) => {
          tokens.push(req.token());
          if (req.token() !== 'fresh') {
            throw new WatchError(ErrorCode.Unauthenticated, 'bad token', undefined, 401);
          }
          req.opened();
          return { reason: 'completed' };
        },
        token === undefined ? { getToken } : { token, getToken },
      );
      expect(r.items.at(-1)).toMatchObject({ kind: 'end', reason: 'completed' });
      expect(asked).toBe(3);
      expect(tokens.at(-1)).toBe('fresh');
      const retries = r.events.filter(
        (e) => e.type === 'retrying' && e.reason.includes('getToken() failed'),
      );
      expect(retries).toHaveLength(2);
      for (const e of retries)
        expect(e).toMatchObject({
          reason: expect.stringMatching(/getToken\(\) failed: token service down/),
        });
    }
  });

  it('after token_expired asks getToken() once and reports it once', async () => {
    let asked = 0;
    const events = (
      await run(
        async (req, attempt) => {
          req.opened();
          return attempt === 0 ? { reason: 'token_expired' } : { reason: 'completed' };
        },
        { token: 'a', getToken: () => `b${++asked}` },
      )
    ).events;
    expect(asked).toBe(1);
    expect(events.filter((e) => e.type === 'token')).toEqual([
      { type: 'token', reason: 'expired' },
    ]);
  });

  it('ends at once on not_found, and on token_expired without getToken()', async () => {
    const missing = await run(async () => {
      throw new WatchError(ErrorCode.NotFound, 'no such order', undefined, 404);
    });
    expect(missing.afters).toHaveLength(1);
    expect(missing.items.at(-1)).toMatchObject({ reason: 'error', error: { code: 'not_found' } });
    const expired = await run(async (req) => {
      req.opened();
      return { reason: 'token_expired' };
    });
    expect(expired.items.at(-1)).toMatchObject({ error: { code: 'unauthenticated' } });
  });

  it('uses EventSource for SSE only where the platform keeps its session cookie', () => {
    const chosen: boolean[] = [];
    const probe: ConnectorFactory = (opts) => {
      chosen.push(opts.useEventSource);
      return { connect: () => new Promise(() => undefined), close: () => undefined };
    };
    const g = globalThis as { EventSource?: unknown; document?: unknown };
    try {
      // Node with --experimental-eventsource: a global EventSource, no cookie store.
      g.EventSource = class {};
      createWatch('o', { transport: 'sse', baseUrl: 'x' }, { sse: probe }).close();
      g.document = { cookie: '' };
      createWatch('o', { transport: 'sse', baseUrl: 'x' }, { sse: probe }).close();
    } finally {
      delete g.EventSource;
      delete g.document;
    }
    expect(chosen).toEqual([false, true]);
  });

  it('refuses a transport the entry point does not offer, and bad input, at once', () => {
    expect(() => createWatch('o', { transport: 'grpc', baseUrl: 'x' }, {})).toThrow(/node/);
    const never: ConnectorFactory = () => ({
      connect: () => new Promise(() => undefined),
      close: () => undefined,
    });
    const bad = { transport: 'sse', baseUrl: 'x', after: -1 } as const;
    expect(() => createWatch('o', bad, { sse: never })).toThrow(/after/);
  });
});

describe('position and done', () => {
  /** A watch whose service sends seqs 1..`total` at once and completes. */
  function completedWatch(total: number) {
    const factory: ConnectorFactory = () => ({
      connect: async (req) => {
        req.opened();
        for (let seq = req.afterSeq + 1; seq <= total; seq++) req.item(ev(seq));
        return { reason: 'completed' };
      },
      close: () => undefined,
    });
    return createWatch('o', { transport: 'sse', baseUrl: 'x' }, { sse: factory });
  }
  const settledYet = async (p: Promise<unknown>) => {
    let settled = false;
    void p.then(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    return settled;
  };

  it('settles done only when the consumer takes the end, at the position it was handed', async () => {
    const watch = completedWatch(5);
    const it = watch[Symbol.asyncIterator]();
    await it.next();
    expect(watch.cursor).toBe(1);
    expect(await settledYet(watch.done)).toBe(false);
    // Seqs 2..5 and the end wait for the consumer; the watch itself is over.
    expect(watch.buffered).toBe(5);
    for (let i = 0; i < 4; i++) await it.next();
    expect(await settledYet(watch.done)).toBe(false);
    const end = await it.next();
    expect(end.value).toEqual({ kind: 'end', reason: 'completed', lastSeq: 5 });
    expect(await watch.done).toBe(end.value);
  });

  it('ends aborted at what was taken when the consumer leaves a completed watch early', async () => {
    const watch = completedWatch(5);
    const taken: number[] = [];
    for await (const item of watch) {
      if (item.kind === 'event') taken.push(item.event.seq);
      if (taken.length === 2) break;
    }
    expect(await watch.done).toEqual({ kind: 'end', reason: 'aborted', lastSeq: 2 });
    expect(watch.cursor).toBe(2);
    expect(watch.stats.items).toEqual({ event: 2 });
  });
});
