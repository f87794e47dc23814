import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ErrorCode, GatewayError } from '@app/contracts';
import { DeadlineQueue } from '@app/event-bus';
import {
  startStream,
  streamLifecycle,
  type ConnectionPort,
  type StreamContext,
  type StreamHandle,
} from './stream-lifecycle';

/** A controllable connection: every step waits for the test to let it go on. */
function harness(opts: { goneAtStart?: boolean; deadlines?: DeadlineQueue } = {}) {
  const log: string[] = [];
  const open = new Map<string, number>();
  let goneListener: (() => void) | undefined;
  let gone = opts.goneAtStart ?? false;
  const deferred = () => {
    let resolve!: () => void;
    let reject!: (err: unknown) => void;
    const promise = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
  const authorized = deferred();
  const opened = deferred();
  let ctx: StreamContext | undefined;
  let slots = 0;
  let handles = 0;
  let slotError: Error | undefined;
  const port: ConnectionPort = {
    watchGone: (onGone) => {
      if (gone) onGone();
      else goneListener = onGone;
    },
    unwatchGone: (onGone) => {
      if (goneListener === onGone) goneListener = undefined;
      log.push('unwatch');
    },
    destroy: () => log.push('destroy'),
  };
  const lifecycle$ = streamLifecycle<StreamHandle>(
    {
      transport: 't',
      port,
      authorize: () => authorized.promise,
      acquireSlot: () => {
        if (slotError) throw slotError;
        slots++;
        let released = false;
        return () => {
          if (released) throw new Error('slot released twice');
          released = true;
          slots--;
        };
      },
      open: async (c) => {
        ctx = c;
        await opened.promise;
        handles++;
        let closed = false;
        return {
          close: () => {
            if (closed) return;
            closed = true;
            handles--;
          },
        };
      },
    },
    {
      gauge: {
        connectionOpened: (t) => open.set(t, (open.get(t) ?? 0) + 1),
        connectionClosed: (t) => open.set(t, (open.get(t) ?? 0) - 1),
      },
      endGraceMs: 1_000,
      deadlines: opts.deadlines ?? new DeadlineQueue(),
    },
  );
  return {
    log,
    lifecycle$,
    authorized,
    opened,
    get ctx() {
      return ctx;
    },
    /** The client leaves. */
    leave: () => {
      gone = true;
      goneListener?.();
    },
    failSlot: (err: Error) => (slotError = err),
    /** Everything the connection holds: gauge, slots, open handles, gone listener. */
    held: () => ({
      gauge: open.get('t') ?? 0,
      slots,
      handles,
      watching: goneListener !== undefined,
    }),
  };
}

const NOTHING = { gauge: 0, slots: 0, handles: 0, watching: false };
const flush = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

describe('streamLifecycle', () => {
  afterEach(() => jest.useRealTimers());

  it('holds a gauge, a slot and the handle while open, and gives each back once when the client leaves', async () => {
    const h = harness();
    const p = startStream(h.lifecycle$);
    h.authorized.resolve();
    h.opened.resolve();
    const handle = await p;
    expect(handle).toBeDefined();
    expect(h.held()).toEqual({ gauge: 1, slots: 1, handles: 1, watching: true });
    h.leave();
    h.leave();
    expect(h.held()).toEqual(NOTHING);
  });

  it('client already gone when the lifecycle starts (HTTP/2 stream cancelled during the guard): nothing is taken', async () => {
    const h = harness({ goneAtStart: true });
    await expect(startStream(h.lifecycle$)).resolves.toBeUndefined();
    h.authorized.resolve();
    h.opened.resolve();
    await flush();
    expect(h.held()).toEqual(NOTHING);
    expect(h.ctx).toBeUndefined();
  });

  it('client leaves while authorizing: no slot is taken, nothing opened', async () => {
    const h = harness();
    const p = startStream(h.lifecycle$);
    h.leave();
    h.authorized.resolve();
    await expect(p).resolves.toBeUndefined();
    await flush();
    expect(h.held()).toEqual(NOTHING);
    expect(h.ctx).toBeUndefined();
  });

  it('client leaves while the stream opens: the handle is closed as soon as it exists', async () => {
    const h = harness();
    const p = startStream(h.lifecycle$);
    h.authorized.resolve();
    await flush();
    expect(h.held().slots).toBe(1);
    h.leave();
    expect(h.held().slots).toBe(0);
    h.opened.resolve();
    await expect(p).resolves.toBeUndefined();
    await flush();
    expect(h.held()).toEqual(NOTHING);
  });

  it.each([
    ['authorization', (h: ReturnType<typeof harness>) => h.authorized.reject(notFound())],
    [
      'the slot',
      (h: ReturnType<typeof harness>) => {
        h.failSlot(notFound());
        h.authorized.resolve();
      },
    ],
    [
      'the open',
      (h: ReturnType<typeof harness>) => {
        h.authorized.resolve();
        h.opened.reject(notFound());
      },
    ],
  ])('fails in %s: rejects with the typed error and releases everything', async (_, fail) => {
    const h = harness();
    const p = startStream(h.lifecycle$);
    fail(h);
    await expect(p).rejects.toBeInstanceOf(GatewayError);
    expect(h.held()).toEqual(NOTHING);
  });

  it('stream ended and the client takes the last bytes: released when it closes, never destroyed', async () => {
    jest.useFakeTimers();
    const h = harness();
    const p = startStream(h.lifecycle$);
    h.authorized.resolve();
    h.opened.resolve();
    await p;
    h.ctx?.ended();
    expect(h.held().slots).toBe(1);
    h.leave();
    jest.advanceTimersByTime(5_000);
    expect(h.held()).toEqual(NOTHING);
    expect(h.log).not.toContain('destroy');
  });

  it('stream ended but the client stopped reading: destroyed after the grace period, then released', async () => {
    jest.useFakeTimers();
    const h = harness();
    const p = startStream(h.lifecycle$);
    h.authorized.resolve();
    h.opened.resolve();
    await p;
    h.ctx?.ended();
    h.ctx?.ended();
    jest.advanceTimersByTime(999);
    expect(h.log).not.toContain('destroy');
    expect(h.held().slots).toBe(1);
    jest.advanceTimersByTime(1);
    expect(h.log.filter((l) => l === 'destroy')).toHaveLength(1);
    expect(h.held()).toEqual(NOTHING);
    expect(h.ctx?.closed).toBe(true);
    // The destroyed socket's close comes later: nothing is released twice.
    h.leave();
    expect(h.held()).toEqual(NOTHING);
  });

  it('connections in their grace period share the deadline queue: one timer, not one each', async () => {
    jest.useFakeTimers();
    const deadlines = new DeadlineQueue();
    const all = Array.from({ length: 20 }, () => harness({ deadlines }));
    for (const h of all) {
      const p = startStream(h.lifecycle$);
      h.authorized.resolve();
      h.opened.resolve();
      await p;
      h.ctx?.ended();
    }
    expect(jest.getTimerCount()).toBe(1);
    // Most clients take their last bytes and leave; their deadlines go with them.
    for (const h of all.slice(0, 15)) h.leave();
    jest.advanceTimersByTime(1_000);
    expect(all.map((h) => h.log.includes('destroy'))).toEqual([
      ...new Array<boolean>(15).fill(false),
      ...new Array<boolean>(5).fill(true),
    ]);
    expect(all.map((h) => h.held())).toEqual(new Array(20).fill(NOTHING));
    expect(deadlines.size).toBe(0);
  });

  it('stream ends during the open (a finished order): the grace timer runs from there', async () => {
    jest.useFakeTimers();
    const h = harness();
    const p = startStream(h.lifecycle$);
    h.authorized.resolve();
    await flush();
    h.ctx?.ended();
    h.opened.resolve();
    await p;
    jest.advanceTimersByTime(1_000);
    expect(h.log).toContain('destroy');
    expect(h.held()).toEqual(NOTHING);
  });

  it('client leaves while an async slot is being taken: the slot is given back at once', async () => {
    let granted!: (release: () => void) => void;
    let released = 0;
    const lifecycle$ = streamLifecycle<StreamHandle>(
      {
        transport: 't',
        port: { watchGone: () => {}, unwatchGone: () => {}, destroy: () => {} },
        authorize: () => Promise.resolve(),
        acquireSlot: () => new Promise((resolve) => (granted = resolve)),
        open: () => Promise.resolve({ close: () => {} }),
      },
      {
        gauge: { connectionOpened: () => {}, connectionClosed: () => {} },
        deadlines: new DeadlineQueue(),
      },
    );
    const sub = lifecycle$.subscribe();
    await flush();
    sub.unsubscribe();
    granted(() => released++);
    await flush();
    expect(released).toBe(1);
  });

  it('unsubscribing (shutdown) releases everything once', async () => {
    const h = harness();
    const sub = h.lifecycle$.subscribe();
    h.authorized.resolve();
    h.opened.resolve();
    await flush();
    expect(h.held().handles).toBe(1);
    sub.unsubscribe();
    sub.unsubscribe();
    h.leave();
    expect(h.held()).toEqual(NOTHING);
  });

  it('is subscribed to once: a connection happens once', () => {
    const h = harness();
    h.lifecycle$.subscribe();
    expect(() => h.lifecycle$.subscribe()).toThrow(TypeError);
  });

  it('an open connection keeps neither the plan nor its steps (idle memory per connection)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    // Made outside the plan's scope (closures made there would keep that whole scope), as
    // a transport's port, handle and slot release are of their own.
    const port = new QuietPort();
    const openHandle = () => Promise.resolve(new QuietHandle());
    const release = () => {};
    const gauge = { connectionOpened: () => {}, connectionClosed: () => {} };
    const deadlines = new DeadlineQueue();
    const opened = async () => {
      // What the plan's steps would capture: a transport's request, its spec, a token.
      const captured = { request: new Array<number>(1_000).fill(0) };
      const plan = {
        transport: 't',
        port,
        authorize: () => Promise.resolve(captured.request.length),
        acquireSlot: () => release,
        open: openHandle,
      };
      const lifecycle = streamLifecycle<StreamHandle>(plan, { gauge, deadlines });
      const handle = await startStream(lifecycle);
      return { lifecycle, handle, plan: new WeakRef(plan), captured: new WeakRef(captured) };
    };
    const held = await opened();
    // WeakRef targets stay alive until the current task ends.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(held.handle).toBeDefined();
    expect(held.lifecycle.closed).toBe(false);
    expect(held.plan.deref()).toBeUndefined();
    expect(held.captured.deref()).toBeUndefined();
  });

  it('every ordering of leave / authorize / open / end releases exactly what was taken', async () => {
    const steps = ['leave', 'authorize', 'open', 'end'] as const;
    for (const order of permutations([...steps])) {
      jest.useFakeTimers();
      const h = harness();
      const p = startStream(h.lifecycle$).catch(() => undefined);
      for (const step of order) {
        if (step === 'leave') h.leave();
        if (step === 'authorize') h.authorized.resolve();
        if (step === 'open') h.opened.resolve();
        if (step === 'end') h.ctx?.ended();
        await flush();
      }
      await p;
      jest.advanceTimersByTime(2_000);
      expect({ order, held: h.held() }).toEqual({ order, held: NOTHING });
      jest.useRealTimers();
    }
  });
});

class QuietPort implements ConnectionPort {
  watchGone(): void {}
  unwatchGone(): void {}
  destroy(): void {}
}

class QuietHandle implements StreamHandle {
  close(): void {}
}

function notFound(): GatewayError {
  return new GatewayError(ErrorCode.NotFound, 'order x not found');
}

function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}
