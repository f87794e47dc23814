import { ErrorCode } from '@app/contracts/gateway-error';
import { DEFAULT_GIVE_UP_BEFORE_FIRST_OPEN_MS, GiveUp } from './give-up';
import type { ConnectorFactory } from './transports/connector';
import { WatchError } from './watch-error';
import { createWatch } from './watch-order';

const refused = new WatchError(
  ErrorCode.Unavailable,
  'http://x: connection refused',
  undefined,
  undefined,
  {
    url: 'http://x',
    cause: 'refused',
  },
);

describe('GiveUp', () => {
  it('bounds a watch that never connected by time, and lets a connected one resume for ever', () => {
    let now = 0;
    const g = new GiveUp({}, () => now);
    now = DEFAULT_GIVE_UP_BEFORE_FIRST_OPEN_MS - 1;
    expect(g.failed(refused)).toBeUndefined();
    now = DEFAULT_GIVE_UP_BEFORE_FIRST_OPEN_MS;
    expect(g.failed(refused)).toMatchObject({
      code: 'unavailable',
      network: { url: 'http://x', cause: 'refused' },
      message: expect.stringMatching(
        /^gave up after 2 attempt\(s\) in 30000 ms without a connection: http:\/\/x: connection refused$/,
      ),
    });

    const connected = new GiveUp({}, () => now);
    connected.opened();
    for (let i = 0; i < 1_000; i++, now += 10_000)
      expect(connected.failed(refused)).toBeUndefined();
  });

  it('counts maxAttempts and giveUpAfterMs from the last open', () => {
    let now = 0;
    const g = new GiveUp({ maxAttempts: 3, giveUpAfterMs: 5_000 }, () => now);
    g.opened();
    now = 60_000;
    expect(g.failed(refused)).toBeUndefined();
    now += 4_999;
    expect(g.failed(refused)).toBeUndefined();
    expect(g.failed(refused)?.message).toMatch(
      /^gave up after 3 attempt\(s\) in 4999 ms since the connection was lost/,
    );
    g.opened();
    now += 100_000;
    expect(g.failed(refused)).toBeUndefined();
    now += 5_000;
    expect(g.failed(refused)?.message).toMatch(/after 2 attempt\(s\) in 5000 ms/);
  });

  it('ends a watch that never connects by default, and refuses unusable bounds', async () => {
    jest.useFakeTimers();
    try {
      const failing: ConnectorFactory = () => ({
        connect: () => Promise.reject(refused),
        close: () => undefined,
      });
      const watch = createWatch('o', { transport: 'sse', baseUrl: 'http://x' }, { sse: failing });
      let ended = false;
      void watch.done.then(() => (ended = true));
      void (async () => {
        for await (const _ of watch);
      })();
      // The default bound plus at most one backoff step (10 s).
      await jest.advanceTimersByTimeAsync(DEFAULT_GIVE_UP_BEFORE_FIRST_OPEN_MS + 10_000);
      expect(ended).toBe(true);
      expect(await watch.done).toMatchObject({
        reason: 'error',
        error: { network: { cause: 'refused' } },
      });
    } finally {
      jest.useRealTimers();
    }
    const never: ConnectorFactory = () => ({
      connect: () => new Promise(() => undefined),
      close: () => undefined,
    });
    expect(() =>
      createWatch('o', { transport: 'sse', baseUrl: 'x', maxAttempts: 0 }, { sse: never }),
    ).toThrow(/maxAttempts/);
    expect(() =>
      createWatch('o', { transport: 'sse', baseUrl: 'x', giveUpAfterMs: -1 }, { sse: never }),
    ).toThrow(/giveUpAfterMs/);
  });
});
