import { OrderStatus } from '@app/order-domain/order-status';
import { createClient, type OrderClient, type TransportName } from '@app/client/node';
import { TcpGate } from '../support/tcp-gate';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { connectionLog, range, record, shippedOrder, track, type Recorded } from './client-harness';

/** 4 s tokens (exp has whole seconds): renewed 1.3 s before expiry, after two thirds. */
const TOKEN_TTL_S = 4;
const LIFETIMES = 3;
const WATCHES = 5;
const TRACK_EVERY_MS = 100;
/** Two thirds of a lifetime, less up to a second of `iat` rounding. */
const MIN_RENEWAL_INTERVAL_S = (TOKEN_TTL_S * 2) / 3 - 1;

/**
 * A client's watches share its token source: one getToken() call per renewal whatever
 * the number of watches (a token source per watch asks N times), and every watch moves
 * to the new token without a break. Over socket.io and gRPC, where the watches share
 * one connection, the connections the service sees stay at one, two during a handover.
 */
describe('createClient: one token source for its watches', () => {
  let app: TestApp;
  const gates: TcpGate[] = [];
  const clients: OrderClient[] = [];

  beforeAll(async () => {
    app = await startTestApp({ AUTH_CLOCK_TOLERANCE_S: '0' });
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    for (const g of gates) await g.close();
    await app.close();
  });

  it(`asks getToken() once per renewal for ${WATCHES} watches, across ${LIFETIMES} lifetimes`, async () => {
    const startedAt = performance.now();
    const mint = () => app.token({ sub: 'alice', scopes: ['orders:read'], ttlS: TOKEN_TTL_S });
    const runs = await Promise.all(
      (['ws', 'grpc'] as TransportName[]).map(async (transport) => {
        const gate = await TcpGate.listen(transport === 'grpc' ? app.ports.grpc : app.ports.http);
        gates.push(gate);
        let calls = 0;
        const client = createClient({
          transport,
          baseUrl:
            transport === 'grpc' ? `127.0.0.1:${gate.port}` : `http://127.0.0.1:${gate.port}`,
          token: mint(),
          getToken: () => {
            calls++;
            return mint();
          },
        });
        clients.push(client);
        const watches = await Promise.all(
          range(0, WATCHES).map(async (i) => {
            const orderId = `shared-tokens-${transport}-${i}`;
            await shippedOrder(app, orderId, 'alice');
            const log: Recorded['connection'] = [];
            const watch = client.watch(orderId, { onConnection: connectionLog(log) });
            return { orderId, watch, rec: record(watch, log) };
          }),
        );
        return { transport, gate, watches, calls: () => calls, maxConnections: 0 };
      }),
    );
    const all = runs.flatMap((r) => r.watches);
    await waitFor(() => all.every((w) => w.watch.cursor === 4), 'history delivered', 20_000);

    const last = new Map<string, number>();
    const deadline = performance.now() + LIFETIMES * TOKEN_TTL_S * 1000;
    while (performance.now() < deadline) {
      for (const w of all) last.set(w.orderId, await track(app, w.orderId));
      for (const r of runs) r.maxConnections = Math.max(r.maxConnections, r.gate.connections);
      await new Promise((resolve) => setTimeout(resolve, TRACK_EVERY_MS));
    }
    for (const w of all) await app.publish(w.orderId, OrderStatus.Delivered);

    await Promise.all(all.map((w) => w.watch.done));
    const elapsedMs = performance.now() - startedAt;
    for (const r of runs) {
      for (const w of r.watches) {
        const end = await w.watch.done;
        await w.rec.finished;
        const events = w.rec.connection.map((c) => c.e);
        const what = `${r.transport} ${w.orderId}`;
        expect([what, end.reason]).toEqual([what, 'completed']);
        expect([what, w.rec.seqs()]).toEqual([what, range(1, last.get(w.orderId)! + 1)]);
        // No token_expired end, no refusal, no retry: every renewal was a handover.
        expect([what, events.filter((e) => e.type === 'retrying')]).toEqual([what, []]);
        const renewed = events.filter((e) => e.type === 'token' && e.reason === 'renewed');
        expect([what, renewed.length >= LIFETIMES - 1]).toEqual([what, true]);
      }
      console.log(
        `${r.transport}: ${WATCHES} watches, ${r.calls()} getToken() calls in ${Math.round(elapsedMs)} ms, at most ${r.maxConnections} connection(s)`,
      );
      // One call per renewal, heard by every watch (with a source per watch, each would
      // count only its own calls, and the calls would add up to N per renewal).
      expect(r.watches.map((w) => w.watch.stats.tokenRefreshes)).toEqual(
        r.watches.map(() => r.calls()),
      );
      // A token is used for two thirds of its lifetime, less the rounding of `iat`.
      const maxRenewals = Math.ceil(elapsedMs / (MIN_RENEWAL_INTERVAL_S * 1000)) + 1;
      expect([r.transport, r.calls() >= LIFETIMES - 1]).toEqual([r.transport, true]);
      expect([r.transport, r.calls() <= maxRenewals]).toEqual([r.transport, true]);
      expect([r.transport, r.maxConnections <= 2]).toEqual([r.transport, true]);
    }
  }, 60_000);
});
