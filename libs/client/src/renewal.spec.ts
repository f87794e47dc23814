import { OrderStatus } from '@app/order-domain/order-status';
import type { StreamItem } from '@app/order-domain/order-events';
import type { ConnectRequest, ConnectorFactory } from './transports/connector';
import type { ConnectionEvent, WatchItem, WatchOptions } from './types';
import { createWatch } from './watch-order';

const ev = (seq: number): StreamItem => ({
  kind: 'event',
  event: { orderId: 'o', seq, status: OrderStatus.Paid, publishedAtUs: 0 },
});

const macrotask = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A service whose order gets seq after seq while any connection is open: each open
 * connection replays from its resume point, then receives every new seq (as the bus
 * fans out to every subscriber). `token_expired` ends a connection whose token is not
 * the newest when `expire()` is called.
 */
function fakeService() {
  let last = 0;
  const open = new Set<{ req: ConnectRequest; token: string | undefined; end: () => void }>();
  const tokens: (string | undefined)[] = [];
  const factory: ConnectorFactory = () => ({
    connect: (req) =>
      new Promise((resolve, reject) => {
        const token = req.token();
        tokens.push(token);
        const conn = {
          req,
          token,
          end: () => {
            open.delete(conn);
            resolve({ reason: 'token_expired' });
          },
        };
        req.signal.addEventListener('abort', () => {
          open.delete(conn);
          reject(new Error('aborted'));
        });
        void macrotask().then(() => {
          if (req.signal.aborted) return;
          req.opened();
          for (let seq = req.afterSeq + 1; seq <= last; seq++) req.item(ev(seq));
          open.add(conn);
        });
      }),
    close: () => undefined,
  });
  return {
    factory,
    tokens,
    open,
    publish: () => {
      last++;
      for (const c of open) c.req.item(ev(last));
    },
    expireAllBut: (token: string) => {
      for (const c of [...open]) if (c.token !== token) c.end();
    },
  };
}

const jwt = (iat: number, exp: number) =>
  `h.${Buffer.from(JSON.stringify({ sub: 's', iat, exp })).toString('base64url')}.sig`;

describe('token renewal (make-before-break)', () => {
  afterEach(() => jest.useRealTimers());

  it.each([
    ['after the new connection opened', false],
    ['before the new connection opened', true],
  ])('moves an open stream to each new token, the old one expiring %s', async (_, early) => {
    // The fake service runs on setImmediate; the token's clock is faked.
    jest.useFakeTimers({ now: 1_000_000, doNotFake: ['setImmediate'] });
    const svc = fakeService();
    const minted: string[] = [];
    const mint = () => {
      const now = Math.floor(Date.now() / 1000);
      minted.push(jwt(now, now + 60));
      return minted[minted.length - 1];
    };
    const events: ConnectionEvent[] = [];
    const renewals = () => events.filter((e) => e.type === 'token' && e.reason === 'renewed');
    const options: WatchOptions = {
      transport: 'sse',
      baseUrl: 'x',
      token: mint(),
      getToken: mint,
      onConnection: (e) => events.push(e),
    };
    const watch = createWatch('o', options, { sse: svc.factory });
    const items: WatchItem[] = [];
    const consumed = (async () => {
      for await (const item of watch) items.push(item);
    })();
    for (let i = 0; i < 3 && svc.open.size === 0; i++) await macrotask();
    for (let round = 1; round <= 3; round++) {
      svc.publish();
      // Two thirds of the 60 s lifetime: the refresh ahead of expiry.
      await jest.advanceTimersByTimeAsync(40_000);
      // The old stream may end before its successor is open: the watch waits for it.
      if (early) svc.expireAllBut(minted[round]);
      svc.publish();
      for (let i = 0; i < 5 && renewals().length < round; i++) await macrotask();
      svc.publish();
      // The service ends every stream still on an old token: none may be left.
      svc.expireAllBut(minted[round]);
      svc.publish();
    }
    watch.close();
    await consumed;
    const seqs = items.flatMap((i) => (i.kind === 'event' ? [i.event.seq] : []));
    expect(seqs).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect(items.filter((i) => i.kind === 'gap')).toEqual([]);
    expect(svc.tokens).toEqual(minted);
    expect(events.filter((e) => e.type === 'retrying')).toEqual([]);
    expect(renewals()).toHaveLength(3);
    expect(watch.stats.reconnects).toBe(0);
  });
});
