import fc from 'fast-check';
import { OrderStatus } from '@app/order-domain/order-status';
import { watchOrder, type OrderWatch, type TransportName } from '@app/client/node';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import {
  ALL_TRANSPORTS,
  closeWatches,
  baseUrlFor,
  range,
  shippedOrder,
  track,
  seqOf,
} from './client-harness';

/** Few runs: each one is a real burst over a real connection, and two watches. */
const RUNS_PER_TRANSPORT = 4;
const MAX_BURST = 40;

/**
 * The position a watch reports is the seq of the last item its consumer was handed,
 * whatever the watch had buffered beyond it: a consumer that handles its first item
 * while a burst arrives, breaks after k items and resumes from the reported position
 * (`done.lastSeq`, which `cursor` equals) gets every later seq exactly once.
 */
describe.each(ALL_TRANSPORTS)(
  'position after an early break over %s',
  (transport: TransportName) => {
    let app: TestApp;
    const watches: OrderWatch[] = [];
    let run = 0;

    beforeAll(async () => {
      app = await startTestApp();
    });
    afterEach(async () => {
      await closeWatches(watches);
    });
    afterAll(async () => {
      await app.close();
    });

    const open = (orderId: string, after = 0): OrderWatch => {
      const w = watchOrder(orderId, {
        transport,
        baseUrl: baseUrlFor(app, transport),
        token: app.defaultToken,
        longPollWaitS: 5,
        after,
      });
      watches.push(w);
      return w;
    };

    it('resumes from the reported position with every later seq exactly once', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: MAX_BURST }).chain((burst) =>
            fc.record({
              burst: fc.constant(burst),
              take: fc.integer({ min: 1, max: 4 + burst }),
            }),
          ),
          async ({ burst, take }) => {
            const orderId = `pos-${transport}-${run++}`;
            await shippedOrder(app, orderId);
            // An eager reader on the same transport: once it has the whole burst, so has
            // the slow consumer's watch (same service, same fan-out, same process).
            const eager = open(orderId);
            const eagerSeqs: number[] = [];
            void (async () => {
              for await (const item of eager) {
                const seq = seqOf(item);
                if (seq !== undefined) eagerSeqs.push(seq);
              }
            })();
            const watch = open(orderId);
            const taken: number[] = [];
            let last = 4;
            for await (const item of watch) {
              const seq = seqOf(item);
              if (seq !== undefined) taken.push(seq);
              if (taken.length === 1) {
                // The burst arrives while the consumer is still handling its first item.
                for (let i = 0; i < burst; i++) last = await track(app, orderId);
                await waitFor(() => eagerSeqs.at(-1) === last, `burst up to ${last} received`);
              }
              if (taken.length === take) break;
            }
            const end = await watch.done;
            const position = taken.at(-1);
            expect(end).toMatchObject({ kind: 'end', reason: 'aborted', lastSeq: position });
            expect(watch.cursor).toBe(position);

            await app.publish(orderId, OrderStatus.Delivered);
            const resumed = open(orderId, end.lastSeq);
            const rest: number[] = [];
            for await (const item of resumed) {
              const seq = seqOf(item);
              if (seq !== undefined) rest.push(seq);
            }
            expect((await resumed.done).reason).toBe('completed');
            expect([...taken, ...rest]).toEqual(range(1, last + 1));
            for (const w of watches.splice(0)) w.close();
          },
        ),
        { numRuns: RUNS_PER_TRANSPORT },
      );
    });
  },
);
