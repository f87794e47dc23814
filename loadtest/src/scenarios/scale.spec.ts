import type { RunResult } from './result';
import { scaleLimit } from './scale';

/** Only the fields scaleLimit reads. */
function step(o: {
  p99Ms: number;
  lost?: number;
  serviceCpu: number;
  serviceLoopP99Ms?: number;
  /** Everything on the service's core (core-window.ts); absent when not pinned. */
  serviceCoreBusy?: number;
  generatorCpu: number;
  generatorSaturated?: boolean;
}): RunResult {
  return {
    ...(o.serviceCoreBusy === undefined
      ? {}
      : { host: { serverCore: { core: 1, busyPct: o.serviceCoreBusy, softirqPct: 0 } } }),
    ok: true,
    latency: { p99Ms: o.p99Ms },
    events: { lost: o.lost ?? 0, droppedByService: 0, duplicates: 0, outOfOrder: 0 },
    service: { cpuPctAvg: o.serviceCpu, eventLoopLagP99Ms: o.serviceLoopP99Ms ?? 5 },
    generator: {
      cpuPctAvg: o.generatorCpu,
      eventLoopDelayP99Ms: 10,
      saturated: o.generatorSaturated ?? o.generatorCpu >= 85,
    },
  } as unknown as RunResult;
}

describe('scaleLimit', () => {
  it('names no limit on a clean step, however busy the cores', () => {
    expect(scaleLimit(step({ p99Ms: 40, serviceCpu: 95, generatorCpu: 90 }))).toBe('none');
  });

  it('names the core that was full when the bound was passed', () => {
    expect(scaleLimit(step({ p99Ms: 80, serviceCpu: 92, generatorCpu: 60 }))).toBe('service');
    expect(scaleLimit(step({ p99Ms: 80, serviceCpu: 60, generatorCpu: 88 }))).toBe('generator');
    expect(scaleLimit(step({ p99Ms: 80, serviceCpu: 90, generatorCpu: 90 }))).toBe('both');
  });

  it("blames the service when its own loop's p99 delay passed the bound below 85 % CPU", () => {
    const r = step({ p99Ms: 66, serviceCpu: 70, serviceLoopP99Ms: 56, generatorCpu: 58 });
    expect(scaleLimit(r)).toBe('service');
  });

  it("reads the service's core as full when the kernel's work there filled it", () => {
    // The process at 78 %, its core at 91 %: softirqs and ksoftirqd for the clients' TCP.
    const r = step({ p99Ms: 70, serviceCpu: 78, serviceCoreBusy: 91, generatorCpu: 55 });
    expect(scaleLimit(r)).toBe('service');
    const quiet = step({ p99Ms: 70, serviceCpu: 78, serviceCoreBusy: 80, generatorCpu: 55 });
    expect(scaleLimit(quiet)).toBe('neither');
  });

  it('counts a generator whose own loop stalled as saturated below 85 % CPU', () => {
    const r = step({ p99Ms: 80, serviceCpu: 50, generatorCpu: 70, generatorSaturated: true });
    expect(scaleLimit(r)).toBe('generator');
  });

  it('says so when a loss, not a full core, ended the climb', () => {
    expect(scaleLimit(step({ p99Ms: 5, lost: 3, serviceCpu: 40, generatorCpu: 30 }))).toBe(
      'neither',
    );
  });
});
