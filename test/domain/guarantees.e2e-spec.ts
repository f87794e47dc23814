import {
  ErrorCode,
  GRPC_STATUS_BY_CODE,
  HTTP_STATUS_BY_CODE,
  kindOf,
  kindOfItem,
  ResetReason,
  StreamEndReason,
  type DomainEvent,
  type DomainSnapshot,
} from '@app/contracts';
import {
  watchOrder,
  type ConnectionEvent,
  type EndItem,
  type TransportName,
  type WatchItem,
} from '@app/client/node';
import { chain } from '../support/item-chain';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { baseUrlFor, closeWatches } from '../client/client-harness';
import { GUARANTEE_DOMAINS } from './guarantee-domains';
import { openPausedReader, type PausedReader } from './paused-readers';

/** Events kept per stream (ring and store history): a resume before them is a reset. */
const RETAINED = 5;
/** A small live queue per subscriber, so a reader that stops reading overflows soon. */
const QUEUE_CAPACITY = 8;
/** Upper bound on fills (FILL_BYTES each) to a stopped reader; the loop ends soon after overflow. */
const MAX_FILLS = 400;
const FILLS_AFTER_OVERFLOW = 10;
const CONNECTION_LIMIT = 2;
/** How long a check waits for what it expects (a loaded CI host is slow, never this slow). */
const WAIT_MS = 10_000;

/** One domain's event as a watch handed it out: its item kind and the event. */
interface Delivered {
  readonly itemKind: string;
  readonly event: DomainEvent;
}

/**
 * The engine's guarantees (resume, reset, skipped, end, limits), the same checks for
 * every domain the repository carries and every transport it is served on: the checks
 * read events through the domain's descriptor only (seq, kinds, fold, isTerminal), so an
 * engine that assumed the order domain fails them for the other one. Real service, real
 * clients: the client library, and raw clients where a reader must stop reading.
 */
describe.each(GUARANTEE_DOMAINS)('the engine carrying the $name domain', (fixture) => {
  const { domain } = fixture;
  let app: TestApp;
  let closed = false;
  const watches: ReturnType<typeof watchOrder>[] = [];
  const readers: PausedReader[] = [];

  beforeAll(async () => {
    app = await startTestApp({
      ...fixture.env,
      BUS_RING_SIZE: String(RETAINED),
      BUS_QUEUE_CAPACITY: String(QUEUE_CAPACITY),
      BUS_OVERFLOW_POLICY: 'conflate',
      LIMIT_CONNECTIONS_PER_PRINCIPAL: String(CONNECTION_LIMIT),
      LIMIT_PUBLISH_PER_WINDOW: '1000000',
      // No keepalive may close a reader that stopped reading during a check.
      WS_PING_INTERVAL_MS: '120000',
      WS_PING_TIMEOUT_MS: '120000',
      WEBSOCKET_PING_INTERVAL_MS: '120000',
      SHUTDOWN_DRAIN_MS: '1000',
    });
  });
  afterEach(async () => {
    await closeWatches(watches);
    for (const r of readers.splice(0)) await r.close();
  });
  afterAll(async () => {
    if (!closed) await app?.close();
  });

  /** Publishes `count` events on a new stream; their REST answers. */
  async function publishMany(streamId: string, count: number): Promise<DomainEvent[]> {
    const out: DomainEvent[] = [];
    for (let i = 0; i < count; i++) out.push(await fixture.next(app, streamId, i + 1));
    return out;
  }

  /**
   * Follows a stream with the client library, as a principal of its own (the stream id)
   * so that only the limits check meets the connection limit.
   */
  function follow(
    transport: TransportName,
    streamId: string,
    opts: { after?: number; principal?: string; maxAttempts?: number } = {},
  ) {
    const items: WatchItem[] = [];
    const connection: ConnectionEvent[] = [];
    const watch = watchOrder(streamId, {
      transport,
      baseUrl: baseUrlFor(app, transport),
      token: app.token({ sub: opts.principal ?? streamId }),
      domain,
      longPollWaitS: 5,
      after: opts.after ?? 0,
      ...(opts.maxAttempts !== undefined ? { maxAttempts: opts.maxAttempts } : {}),
      onConnection: (e) => connection.push(e),
    });
    watches.push(watch);
    void (async () => {
      for await (const item of watch) items.push(item);
    })();
    const delivered = (): Delivered[] =>
      items.flatMap((i) =>
        kindOfItem(domain, i.kind) === undefined
          ? []
          : [{ itemKind: i.kind, event: (i as unknown as Record<string, DomainEvent>)[i.kind] }],
      );
    const ended = () => items.find((i): i is EndItem => i.kind === 'end');
    return { watch, items, connection, delivered, ended };
  }

  /** What a watch hands out for `events`: each under its kind, read by the descriptor. */
  const asDelivered = (events: readonly DomainEvent[]): Delivered[] =>
    events.map((event) => ({ itemKind: kindOf(domain, event).itemKind, event }));

  /** The snapshot after `events`, as the domain folds them. */
  const foldOf = (events: readonly DomainEvent[]): DomainSnapshot | undefined =>
    events.reduce<DomainSnapshot | undefined>((s, e) => domain.fold(s, e), undefined);

  describe.each(fixture.transports)('over %s', (transport) => {
    const id = (check: string) => `${fixture.name}-${transport}-${check}`;

    it('resume: after=k gets exactly k+1..n in order, then live events across a reconnect, no duplicate', async () => {
      const published = await publishMany(id('resume'), 5);
      const f = follow(transport, id('resume'), { after: 2 });
      await waitFor(() => f.watch.cursor === 5, 'the events after 2', WAIT_MS);
      f.watch.reconnect();
      published.push(await fixture.next(app, id('resume')));
      await waitFor(
        () => f.watch.cursor === 6,
        'the event published across the reconnect',
        WAIT_MS,
      );
      expect(f.delivered()).toEqual(asDelivered(published.slice(2)));
      expect(f.items.filter((i) => kindOfItem(domain, i.kind) === undefined)).toEqual([]);
      expect(f.watch.stats).toMatchObject({ duplicates: 0, lost: 0 });
    });

    it.each([
      {
        point: 'older than retention',
        events: RETAINED + 3,
        after: 1,
        reason: ResetReason.BeyondRetention,
      },
      {
        point: 'past the end of the stream',
        events: 2,
        after: 9,
        reason: ResetReason.AheadOfLastSeq,
      },
    ])(
      'reset: a resume point $point gets a reset with the fold (the REST read, owner included), then the following events',
      async ({ events, after, reason }) => {
        const streamId = id(`reset-${reason}`);
        const published = await publishMany(streamId, events);
        const read = await fixture.snapshot(app, streamId);
        const f = follow(transport, streamId, { after });
        await waitFor(() => f.items.length === 1, 'the reset', WAIT_MS);
        const next = await fixture.next(app, streamId);
        await waitFor(() => f.watch.cursor === next.seq, 'the event after the reset', WAIT_MS);
        // The same snapshot whichever path built it: the store's for the REST read, the
        // bus's retained events for a reset.
        expect(read).toEqual({ ...foldOf(published), ownerId: expect.any(String) });
        expect(f.items[0]).toEqual({ kind: 'reset', reset: { reason, snapshot: read } });
        expect(f.items.slice(1)).toHaveLength(1);
        expect(f.delivered()).toEqual(asDelivered([next]));
      },
    );

    // A long-poll client holds no stream between answers, so nothing queues for it: a slow
    // one resumes from retention, and what retention lost is the reset checked above.
    if (transport !== 'longpoll') {
      it('skipped: a reader that stops reading is told which seqs were dropped, in order, no silent gap', async () => {
        const streamId = id('skipped');
        await fixture.next(app, streamId);
        const reader = await openPausedReader(app, domain, transport, streamId, 1);
        readers.push(reader);
        const overflows = () => app.bus.stats.overflows.conflate;
        const before = overflows();
        let last = 1;
        let overflowAt: number | undefined;
        for (let i = 0; i < MAX_FILLS; i++) {
          last = await fixture.fill(app, streamId);
          if (overflowAt === undefined && overflows() > before) overflowAt = i;
          if (overflowAt !== undefined && i >= overflowAt + FILLS_AFTER_OVERFLOW) break;
        }
        expect(overflowAt).toBeDefined();
        reader.resume();
        await waitFor(
          () => chain(reader.items, 1).cursor === last,
          'the newest event after the dropped ones',
          WAIT_MS,
        );
        expect(chain(reader.items, 1)).toEqual({ problems: [], cursor: last });
        expect(reader.items.filter((i) => i.kind === 'skipped').length).toBeGreaterThan(0);
      });
    }

    it("end: the stream completes right after the event the domain's isTerminal marks", async () => {
      const streamId = id('end');
      const published = await publishMany(streamId, 2);
      const f = follow(transport, streamId);
      await waitFor(() => f.watch.cursor === 2, 'the history', WAIT_MS);
      let terminal: DomainEvent;
      let marked: boolean[];
      if (fixture.finish !== undefined) {
        terminal = await fixture.finish(app, streamId);
        await waitFor(f.ended, 'the end', WAIT_MS);
        marked = f.delivered().map((d) => domain.isTerminal(d.event));
      } else {
        // A domain without a terminal event: the test marks one in the descriptor the
        // service carries, so the end must come from asking it.
        const spy = jest
          .spyOn(app.bus.domain, 'isTerminal')
          .mockImplementation((e) => e.orderId === streamId && e.seq === 3);
        try {
          terminal = await fixture.next(app, streamId);
          await waitFor(f.ended, 'the end', WAIT_MS);
          marked = f.delivered().map((d) => domain.isTerminal(d.event));
        } finally {
          spy.mockRestore();
        }
      }
      expect(f.ended()).toEqual({ kind: 'end', reason: 'completed', lastSeq: terminal.seq });
      expect(f.delivered()).toEqual(asDelivered([...published, terminal]));
      expect(marked).toEqual([false, false, true]);
    });

    it('limits: a principal over its connection limit gets the typed refusal', async () => {
      const principal = id('limited');
      await publishMany(principal, 1);
      const open = Array.from({ length: CONNECTION_LIMIT }, () =>
        follow(transport, principal, { principal }),
      );
      // Each holds its slot now (a long-poll client between two answers would not).
      await waitFor(
        () =>
          open.every((f) => f.watch.cursor === 1) &&
          app.bus.subscriberCount(principal) === CONNECTION_LIMIT,
        'the streams within the limit',
        WAIT_MS,
      );
      const refused = follow(transport, principal, { principal, maxAttempts: 1 });
      const end = await waitFor(refused.ended, 'the refusal', WAIT_MS);
      const code = ErrorCode.ResourceExhausted;
      expect(end).toMatchObject({ reason: 'error', lastSeq: 0, error: { code } });
      expect(end.kind === 'end' && end.reason === 'error' ? end.error.status : undefined).toBe(
        transport === 'grpc' ? GRPC_STATUS_BY_CODE[code] : HTTP_STATUS_BY_CODE[code],
      );
      expect(refused.delivered()).toEqual([]);
    });
  });

  it('end: when the service drains, every open stream ends with `shutdown`, none completed', async () => {
    const streamIds = fixture.transports.map((t) => `${fixture.name}-${t}-drain`);
    for (const streamId of streamIds) await fixture.next(app, streamId);
    const follows = fixture.transports.map((t, i) => follow(t, streamIds[i]));
    await waitFor(() => follows.every((f) => f.watch.cursor === 1), 'every stream open', WAIT_MS);
    closed = true;
    await app.close();
    for (const f of follows) {
      const retry = await waitFor(
        () => f.connection.find((e) => e.type === 'retrying'),
        `${f.watch.transport} told to reconnect`,
        WAIT_MS,
      );
      expect([f.watch.transport, retry]).toMatchObject([
        f.watch.transport,
        { reason: StreamEndReason.Shutdown },
      ]);
      expect(f.ended()).toBeUndefined();
    }
  });
});
