import { Registry } from 'prom-client';
import { nowUs } from '@app/contracts';
import { DeliveryLatencyHistogram } from './delivery-latency';

describe('DeliveryLatencyHistogram', () => {
  // The clock stands still while recording: a stall between `now` and record() on a
  // loaded host would move a latency out of its bucket.
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('renders cumulative buckets, sum and count per transport in Prometheus text', async () => {
    const registry = new Registry();
    const h = new DeliveryLatencyHistogram({
      name: 'lat_seconds',
      help: 'h',
      registers: [registry],
    });
    const now = nowUs();
    h.record('sse', now - 300); // 0.3 ms
    h.record('sse', now - 20_000); // 20 ms
    h.record('grpc', now + 5_000); // publisher clock ahead: clamped to 0
    const text = await registry.metrics();
    expect(text).toContain('# TYPE lat_seconds histogram');
    expect(text).toContain('lat_seconds_bucket{transport="sse",le="0.0005"} 1');
    expect(text).toContain('lat_seconds_bucket{transport="sse",le="0.01"} 1');
    expect(text).toContain('lat_seconds_bucket{transport="sse",le="0.025"} 2');
    expect(text).toContain('lat_seconds_bucket{transport="sse",le="+Inf"} 2');
    expect(text).toContain('lat_seconds_count{transport="sse"} 2');
    const sseSum = Number(/lat_seconds_sum\{transport="sse"\} (\S+)/.exec(text)?.[1]);
    expect(sseSum).toBeCloseTo(0.0203, 9);
    expect(text).toContain('lat_seconds_bucket{transport="grpc",le="0.0005"} 1');
    expect(text).toMatch(/lat_seconds_sum\{transport="grpc"\} 0\n/);
    h.reset();
    expect(await registry.metrics()).not.toContain('transport="sse"');
  });
});
