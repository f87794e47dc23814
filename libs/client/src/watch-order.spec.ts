import { ErrorCode } from '@app/contracts/gateway-error';
import { OrderStatus } from '@app/contracts/order-status';
import type { StreamItem } from '@app/contracts/order-events';
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
