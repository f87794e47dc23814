import { OrderStatus } from '@app/order-domain/order-status';
import { createClient, watchOrder, type OrderWatch, type TransportName } from '@app/client/node';
import { TcpGate } from '../support/tcp-gate';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

const ORDERS = 100;

/** Bus subscriptions the service holds, every transport: one per followed order. */
function subscriptions(app: TestApp): number {
  let n = 0;
  for (const v of app.bus.stats.subscriptionsByTransport.values()) n += v;
  return n;
}

/**
 * One client, 100 orders: over socket.io one socket and over gRPC one channel carry
 * every watch (counted where the service accepts them, through a TCP relay), each order
 * still gets its own events, and closing the client leaves no connection.
 */
describe.each<TransportName>(['ws', 'grpc'])('createClient over %s', (transport) => {
  let app: TestApp;
  let gate: TcpGate;
  beforeAll(async () => {
    app = await startTestApp();
    gate = await TcpGate.listen(transport === 'grpc' ? app.ports.grpc : app.ports.http);
  });
  afterAll(async () => {
    await gate.close();
    await app.close();
  });

  const baseUrl = () =>
    transport === 'grpc' ? `127.0.0.1:${gate.port}` : `http://127.0.0.1:${gate.port}`;

  it(`follows ${ORDERS} orders over one connection`, async () => {
    const ids = Array.from({ length: ORDERS }, (_, i) => `sc-${transport}-${i}`);
    await Promise.all(ids.map((id) => app.publish(id, OrderStatus.Created)));
    const client = createClient({ transport, baseUrl: baseUrl(), token: app.defaultToken });
    const watches = ids.map((id) => client.watch(id));
    const seen = new Map<string, number[]>(ids.map((id) => [id, []]));
    const loops = watches.map(async (w) => {
      for await (const item of w)
        if (item.kind === 'event') seen.get(w.orderId)!.push(item.event.seq);
    });
    await waitFor(() => watches.every((w) => w.cursor === 1), 'every order delivered', 20_000);
    // A live event reaches its order's watch only.
    await app.publish(ids[7], OrderStatus.Paid);
    await waitFor(() => watches[7].cursor === 2, 'live event delivered');
    console.log(`${transport}: ${ORDERS} watches, ${gate.connections} connection(s) on the server`);
    expect(gate.connections).toBe(1);
    expect(seen.get(ids[7])).toEqual([1, 2]);
    expect(ids.filter((id) => seen.get(id)!.length !== (id === ids[7] ? 2 : 1))).toEqual([]);

    // One watch leaving ends its own stream on the service, and costs the others nothing.
    expect(subscriptions(app)).toBe(ORDERS);
    watches[0].close();
    await watches[0].done;
    await waitFor(() => subscriptions(app) === ORDERS - 1, 'its stream ended on the service');
    await app.publish(ids[1], OrderStatus.Paid);
    await waitFor(() => watches[1].cursor === 2, 'the others go on');
    expect(watches[1].stats.reconnects).toBe(0);

    client.close();
    const ends = await Promise.all(watches.map((w) => w.done));
    await Promise.all(loops);
    expect(new Set(ends.map((e) => e.reason))).toEqual(new Set(['aborted']));
    await waitFor(() => gate.connections === 0, 'no connection left');
  }, 60_000);

  it('a watch of its own per order costs a connection each (the comparison)', async () => {
    const ids = ['own-1', 'own-2', 'own-3'].map((id) => `${id}-${transport}`);
    await Promise.all(ids.map((id) => app.publish(id, OrderStatus.Created)));
    const opts = { transport, baseUrl: baseUrl(), token: app.defaultToken };
    const watches: OrderWatch[] = ids.map((id) => watchOrder(id, opts));
    await waitFor(() => gate.connections === 3, 'three connections');
    for (const w of watches) w.close();
    await Promise.all(watches.map((w) => w.done));
    await waitFor(() => gate.connections === 0, 'no connection left');
  });
});
