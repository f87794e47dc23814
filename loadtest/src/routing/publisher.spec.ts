import { routingEvent } from './publisher';

describe('the routing scenario events', () => {
  it('are as large as the padded order events its figures were first measured with', () => {
    const [orderId, seq, publishedAtUs] = ['o-1234', 98_765, 1_800_000_000_000_000];
    // The order event the scenario published before the payload domain, as it wrote it.
    const padded = { orderId, seq, status: 'preparing', publishedAtUs, padding: 'x'.repeat(24) };
    expect(JSON.stringify(routingEvent(orderId, seq, publishedAtUs)).length).toBe(
      JSON.stringify(padded).length,
    );
  });
});
