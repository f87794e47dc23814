import type { AppConfig } from '../../config/app-config';
import { HEARTBEAT_FRAME } from './sse-frames';
import { SseHeartbeat } from './sse-heartbeat.service';

describe('SseHeartbeat', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  const stream = () => ({
    writes: [] as string[],
    active: false,
    beat() {
      this.writes.push(HEARTBEAT_FRAME);
    },
  });

  it('beats only streams that wrote nothing since the last beat', () => {
    const hb = new SseHeartbeat({ sse: { heartbeatMs: 1_000, retryMs: 1_000 } } as AppConfig);
    const quiet = stream();
    const busy = stream();
    hb.add(quiet);
    hb.add(busy);

    busy.active = true;
    jest.advanceTimersByTime(1_000);
    expect(quiet.writes).toEqual([HEARTBEAT_FRAME]);
    expect(busy.writes).toEqual([]);

    // Nothing written during the next period: now it needs a beat too.
    jest.advanceTimersByTime(1_000);
    expect(busy.writes).toEqual([HEARTBEAT_FRAME]);
    expect(quiet.writes).toHaveLength(2);
    hb.onModuleDestroy();
  });

  it('stops beating a deleted stream', () => {
    const hb = new SseHeartbeat({ sse: { heartbeatMs: 1_000, retryMs: 1_000 } } as AppConfig);
    const s = stream();
    hb.add(s);
    hb.delete(s);
    jest.advanceTimersByTime(3_000);
    expect(s.writes).toEqual([]);
    hb.onModuleDestroy();
  });
});
