import { steadyTracking } from '../../../libs/event-bus/src/simulator-plan';
import { bareSteadyTracking, isTracking, OrderLog } from './order-log';

describe('bare order log', () => {
  it('makes the same tracking values as the service simulator, so both put the same bytes on the wire', () => {
    for (const step of [0, 1, 7, 999, 1000, 123_456]) {
      expect(bareSteadyTracking(step, 1_800_000_000_000)).toEqual(
        steadyTracking(step, 1_800_000_000_000),
      );
    }
  });

  it('writes status changes and tracking updates with the service field order', () => {
    const log = new OrderLog();
    log.prepare(1, 10, 0, 'lt');
    const [created, shipped] = log.after('lt-1', 0);
    const tracked = log.track('lt-1', 0, 1_800_000_000_000);
    expect(Object.keys(created)).toEqual(['orderId', 'seq', 'status', 'publishedAtUs']);
    expect(Object.keys(shipped)).toEqual([
      'orderId',
      'seq',
      'status',
      'previousStatus',
      'publishedAtUs',
    ]);
    expect(isTracking(tracked)).toBe(true);
    expect(Object.keys(tracked)).toEqual([
      'orderId',
      'seq',
      'status',
      'publishedAtUs',
      'location',
      'etaMs',
    ]);
    expect(tracked).toMatchObject({ seq: 3, status: 'shipped' });
  });
});
