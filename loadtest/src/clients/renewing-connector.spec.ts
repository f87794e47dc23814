import { RenewingConnector, RETIRED_CONNECTORS_KEPT } from './renewing-connector';
import type { Connector, StreamHandlers } from './transport';

/** A connector that records the token it was made with and whether it was closed. */
function fakeFactory() {
  const made: { token: string; closed: boolean; opened: string[] }[] = [];
  const make = (token: string): Connector => {
    const rec = { token, closed: false, opened: [] as string[] };
    made.push(rec);
    return {
      transport: 'sse',
      get requests() {
        return rec.opened.length;
      },
      open: (orderId) => {
        rec.opened.push(orderId);
        return { close: () => undefined };
      },
      close: async () => {
        rec.closed = true;
      },
    };
  };
  return { made, make };
}

const handlers = {} as StreamHandlers;

describe('RenewingConnector', () => {
  it('opens new streams with the newest token and closes connectors past the kept ones', async () => {
    const { made, make } = fakeFactory();
    const c = new RenewingConnector(make, 't0');
    c.open('a', 0, handlers);
    for (let k = 1; k <= RETIRED_CONNECTORS_KEPT + 1; k += 1) {
      await c.renew(`t${k}`);
      c.open('b', 0, handlers);
    }
    expect(made.map((m) => m.token)).toEqual(['t0', 't1', 't2', 't3']);
    expect(made.map((m) => m.opened)).toEqual([['a'], ['b'], ['b'], ['b']]);
    // t0's connector is past the kept ones: closed; the rest still serve their streams.
    expect(made.map((m) => m.closed)).toEqual([true, false, false, false]);
    // Requests count every connector's, closed ones included.
    expect(c.requests).toBe(4);
    await c.close();
    expect(made.every((m) => m.closed)).toBe(true);
  });
});
