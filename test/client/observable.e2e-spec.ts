import { lastValueFrom, toArray, type Subscription } from 'rxjs';
import { OrderStatus } from '@app/order-domain/order-status';
import { watchOrder, type TransportName } from '@app/client/node';
import { toObservable, type WatchValue } from '@app/client/rxjs';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import {
  ALL_TRANSPORTS,
  baseUrlFor,
  range,
  shippedOrder,
  seqOf,
  openStreams,
} from './client-harness';

/** How soon the service must see the connection gone after unsubscribe, on a loaded machine. */
const CLOSED_WITHIN_MS = 1_000;

/**
 * The Observable face on every transport: unsubscribing closes the connection at once,
 * with no item pending to make the watch notice (`from(watch)` notices only on the next
 * item), and the watch's end becomes complete or error.
 */
describe('toObservable(watch)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  it.each(ALL_TRANSPORTS)(
    'over %s: unsubscribe closes the connection on the server at once',
    async (transport: TransportName) => {
      const orderId = `rx-${transport}`;
      await shippedOrder(app, orderId);
      const watch = watchOrder(orderId, {
        transport,
        baseUrl: baseUrlFor(app, transport),
        token: app.defaultToken,
        longPollWaitS: 20,
      });
      const seqs: number[] = [];
      let completed = false;
      const sub: Subscription = toObservable(watch).subscribe({
        next: (item) => seqs.push(seqOf(item) ?? -1),
        complete: () => (completed = true),
      });
      await waitFor(() => seqs.length === 4, 'history delivered');
      // The live stream (long-poll: the next held poll) is open and idle.
      await waitFor(() => openStreams(app) === 1, 'stream open on the server');
      const t0 = performance.now();
      sub.unsubscribe();
      await waitFor(() => openStreams(app) === 0, 'stream closed on the server', 5_000, 2);
      const closedMs = performance.now() - t0;
      console.log(
        `${transport}: the server saw the stream end ${closedMs.toFixed(0)} ms after unsubscribe`,
      );
      expect(closedMs).toBeLessThan(CLOSED_WITHIN_MS);
      expect(seqs).toEqual(range(1, 4));
      // An unsubscribe is the consumer leaving, not the watch completing.
      expect(completed).toBe(false);
      expect(await watch.done).toMatchObject({ reason: 'aborted', lastSeq: 4 });
    },
  );

  it('completes with the order and errors with the WatchError of a refusal', async () => {
    await shippedOrder(app, 'rx-done');
    const opts = { transport: 'sse' as const, baseUrl: app.httpUrl, token: app.defaultToken };
    const all = lastValueFrom(toObservable(watchOrder('rx-done', opts)).pipe(toArray()));
    await app.publish('rx-done', OrderStatus.Delivered);
    const items: WatchValue[] = await all;
    expect(items.map(seqOf)).toEqual(range(1, 5));
    await expect(lastValueFrom(toObservable(watchOrder('rx-missing', opts)))).rejects.toMatchObject(
      { name: 'WatchError', code: 'not_found' },
    );
  });
});
